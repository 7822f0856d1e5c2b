"""The script pyattach runs as its direct reader: `python3 -I -S
pyattach_proc_main.py`, the configuration on stdin (see pyattach_proc).

A script is compiled from its source at every start; the reader itself
is imported, so that it loads from its cached bytecode."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyattach_proc  # noqa: E402

pyattach_proc.run(sys.argv)
