"""gdb's settings of pyattach's walker: set/show pyattach-max-frames,
pyattach-max-reads, pyattach-timeout."""

import gdb

import pyattach_walk as walk


class _Limit(gdb.Parameter):
    """A limit of the walker's, "unlimited" or 0 for none."""

    def __init__(self, name, default, doc):
        self.__doc__ = doc
        self.set_doc = "Set " + doc[0].lower() + doc[1:]
        self.show_doc = "Show " + doc[0].lower() + doc[1:]
        super(_Limit, self).__init__(name, gdb.COMMAND_STACK, gdb.PARAM_ZUINTEGER_UNLIMITED)
        self.value = default

    def get_set_string(self):
        return ""

    def limit(self):
        """The value as the walker takes it: 0 for unlimited."""
        return 0 if self.value is None or self.value < 0 else self.value


_limits = {}


def parameters():
    """set/show pyattach-max-frames, pyattach-max-reads, pyattach-timeout."""
    if _limits:
        return
    _limits["max_frames"] = _Limit("pyattach-max-frames", walk.MAX_FRAMES,
                                   "How many frames of a thread py-bt shows: the innermost half and the outermost half.")
    _limits["max_reads"] = _Limit("pyattach-max-reads", walk.MAX_READS,
                                  "How many memory reads one command of pyattach's walker may make.")
    _limits["timeout"] = _Limit("pyattach-timeout", int(walk.TIMEOUT),
                                "How many seconds one command of pyattach's walker may take.")


def limit(name, default):
    p = _limits.get(name)
    return default if p is None else p.limit()
