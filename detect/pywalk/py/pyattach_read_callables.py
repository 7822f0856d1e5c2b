"""Callables implemented in C, in the inferior's memory: built-in
functions and methods (PyCFunctionObject: its PyMethodDef, m_ml, and
the object it is bound to, m_self) and method-wrappers (wrapperobject:
a slot wrapper's descriptor, whose d_base names the slot and its C
wrapper, bound to self). Named as CPython's gdb extension names them."""

from pyattach_walk_text import escape


class CallableReader(object):
    """Reads built-ins and method-wrappers through mem with the Layout
    L; types is a pyattach_read_types.TypeReader."""

    def __init__(self, mem, layout, types):
        self.mem = mem
        self.L = layout
        self.types = types

    def builtin(self, addr):
        """(name, type name of its self, address of its self) of the
        built-in function or method at addr; self's are None for a
        function without one."""
        L = self.L
        ml = self.mem.ptrv(addr + L.off("PyCFunctionObject.m_ml"))
        name = self.mem.cstring(self.mem.ptrv(ml + L.off("PyMethodDef.ml_name")))
        slf = self.mem.ptrv(addr + L.off("PyCFunctionObject.m_self"))
        if not slf:
            return name, None, None
        return name, self.types.name_of(slf), slf

    def builtin_c_function(self, addr):
        """The address of the C function (PyMethodDef.ml_meth) that the
        built-in function or method at addr runs."""
        L = self.L
        return self.mem.ptrv(self.mem.ptrv(addr + L.off("PyCFunctionObject.m_ml")) + L.off("PyMethodDef.ml_meth"))

    def builtin_line(self, addr):
        """A built-in function or method as CPython's gdb extension
        prints one (py-bt, py-print, py-locals):
        "<built-in method NAME of TYPE object at remote 0xADDR>", or
        "<built-in function NAME>" when it has no self."""
        fn, self_name, self_addr = self.builtin(addr)
        if self_addr is None:
            return "<built-in function %s>" % escape(fn)
        return "<built-in method %s of %s object at remote 0x%x>" % (escape(fn), escape(self_name), self_addr)

    def wrapper(self, addr):
        """(slot name, self's address, the C wrapper function's address)
        of the method-wrapper at addr."""
        L = self.L
        descr = self.mem.ptrv(addr + L.off("wrapperobject.descr"))
        base = self.mem.ptrv(descr + L.off("PyWrapperDescrObject.d_base"))
        name = self.mem.cstring(self.mem.ptrv(base + L.off("wrapperbase.name")))
        slf = self.mem.ptrv(addr + L.off("wrapperobject.self"))
        return name, slf, self.mem.ptrv(base + L.off("wrapperbase.wrapper"))

    def wrapper_line(self, addr):
        """A method-wrapper as CPython's gdb extension names it in py-bt:
        "<method-wrapper '__lt__' of int object at 0xADDR>"."""
        name, slf, _ = self.wrapper(addr)
        return "<method-wrapper %s of %s object at 0x%x>" % (escape(repr(name)), escape(self.types.name_of(slf)), slf)
