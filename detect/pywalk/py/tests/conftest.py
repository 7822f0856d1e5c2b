"""pytest setup for the walker's unit tests: the walker's modules (one
directory up) are importable by name, as gdb and lldb import them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
