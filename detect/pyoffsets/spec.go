package pyoffsets

// A field names a struct member by type and member path, as C writes it
// ("PyThreadState.next", "_PyRuntimeState.interpreters.head"). Members
// that a version lacks are left out of its table, so one list serves
// every version. A bit field gets two keys, NAME:bit_offset (from the
// start of the type) and NAME:bit_size; a type's size is sizeof(TYPE).
var fields = []string{
	// The runtime, interpreters and threads.
	"_PyRuntimeState.interpreters.head",
	"_PyRuntimeState.interpreters.main",
	"PyInterpreterState.next",
	"PyInterpreterState.id",
	"PyInterpreterState.tstate_head",  // 3.7-3.10
	"PyInterpreterState.threads.head", // 3.11+
	"PyThreadState.next",
	"PyThreadState.interp",
	"PyThreadState.frame",            // 3.7-3.10: the PyFrameObject
	"PyThreadState.cframe",           // 3.10-3.12
	"PyThreadState.current_frame",    // 3.13+
	"PyThreadState.thread_id",        // pthread_t
	"PyThreadState.native_thread_id", // 3.8+: the kernel's tid
	"_PyCFrame.current_frame",        // 3.11, 3.12

	// Frames: heap frame objects up to 3.10, interpreter frames after.
	"PyFrameObject.f_back",
	"PyFrameObject.f_code",
	"PyFrameObject.f_lasti",
	"PyFrameObject.f_lineno",
	"PyFrameObject.f_localsplus",
	"PyFrameObject.f_frame",
	"PyFrameObject.f_globals",          // up to 3.10
	"PyFrameObject.f_builtins",         // up to 3.10
	"_PyInterpreterFrame.f_code",       // 3.11, 3.12
	"_PyInterpreterFrame.f_executable", // 3.13+
	"_PyInterpreterFrame.previous",
	"_PyInterpreterFrame.prev_instr", // 3.11, 3.12
	"_PyInterpreterFrame.instr_ptr",  // 3.13+
	"_PyInterpreterFrame.localsplus",
	"_PyInterpreterFrame.stacktop",
	"_PyInterpreterFrame.owner",
	"_PyInterpreterFrame.is_entry", // 3.11
	"_PyInterpreterFrame.f_locals",
	"_PyInterpreterFrame.f_globals",
	"_PyInterpreterFrame.f_builtins",

	// Code objects.
	"PyCodeObject.co_argcount",
	"PyCodeObject.co_nlocals",
	"PyCodeObject.co_flags",
	"PyCodeObject.co_firstlineno",
	"PyCodeObject.co_code",          // up to 3.10
	"PyCodeObject.co_code_adaptive", // 3.11+
	"PyCodeObject.co_varnames",      // up to 3.10
	"PyCodeObject.co_cellvars",
	"PyCodeObject.co_freevars",
	"PyCodeObject.co_localsplusnames", // 3.11+
	"PyCodeObject.co_localspluskinds", // 3.11+
	"PyCodeObject.co_nlocalsplus",     // 3.11+
	"PyCodeObject.co_filename",
	"PyCodeObject.co_name",
	"PyCodeObject.co_qualname", // 3.11+
	"PyCodeObject.co_lnotab",   // up to 3.9
	"PyCodeObject.co_linetable",
	"PyCodeObject._co_firsttraceable", // 3.12+

	// Objects and the types whose values py-locals shows.
	"PyObject.ob_refcnt",
	"PyObject.ob_type",
	"PyVarObject.ob_size",
	"PyTypeObject.tp_name",
	"PyTypeObject.tp_flags",
	"PyASCIIObject.length",
	"PyASCIIObject.state",
	"PyASCIIObject.state.interned",
	"PyASCIIObject.state.kind",
	"PyASCIIObject.state.compact",
	"PyASCIIObject.state.ascii",
	"PyASCIIObject.state.ready", // up to 3.11
	"PyBytesObject.ob_sval",
	"PyTupleObject.ob_item",
	"PyListObject.ob_item",
	"PyLongObject.ob_digit",            // up to 3.11
	"PyLongObject.long_value.lv_tag",   // 3.12+
	"PyLongObject.long_value.ob_digit", // 3.12+
	"PyFloatObject.ob_fval",

	// Thread identity and state: the GIL (in the runtime up to 3.11, the
	// interpreter's ceval.gil pointer from 3.12), the collector's flag,
	// and what reading threading._active takes (sys.modules, a module's
	// dict, dicts and the instance dicts of Thread objects).
	"_PyRuntimeState.ceval.gil",            // 3.7-3.11: the GIL itself
	"PyInterpreterState.ceval.gil",         // 3.12+: a pointer to it
	"_gil_runtime_state.locked",            //
	"_gil_runtime_state.last_holder",       //
	"_PyRuntimeState.gc.collecting",        // 3.7, 3.8
	"PyInterpreterState.gc.collecting",     // 3.9+
	"PyInterpreterState.modules",           // up to 3.11
	"PyInterpreterState.imports.modules",   // 3.12+
	"PyModuleObject.md_dict",               //
	"PyDictObject.ma_used",                 //
	"PyDictObject.ma_keys",                 //
	"PyDictObject.ma_values",               //
	"PyDictKeysObject.dk_size",             // up to 3.10
	"PyDictKeysObject.dk_log2_size",        // 3.11+
	"PyDictKeysObject.dk_log2_index_bytes", // 3.11+
	"PyDictKeysObject.dk_kind",             // 3.11+
	"PyDictKeysObject.dk_nentries",         //
	"PyDictKeysObject.dk_indices",          //
	"PyDictValues.values",                  // 3.11+
	"PyDictValues.capacity",                // 3.13+
	"PyDictValues.size",                    // 3.13+: entries in insertion order
	"PyDictValues.valid",                   // 3.13+: inline values in use
	"PyDictKeyEntry.me_key",                //
	"PyDictKeyEntry.me_value",              //
	"PyDictUnicodeEntry.me_key",            // 3.11+
	"PyDictUnicodeEntry.me_value",          // 3.11+
	"PyTypeObject.tp_basicsize",            //
	"PyTypeObject.tp_dictoffset",           //
	"PyHeapTypeObject.ht_cached_keys",      //

	// What value reprs read of instances and built-ins: a class's
	// __slots__ (its tp_members, up its tp_base chain), a built-in
	// function's PyMethodDef and self, a method-wrapper's slot.
	"PyTypeObject.tp_base",
	"PyTypeObject.tp_members",
	"PyMemberDef.name",
	"PyMemberDef.type",
	"PyMemberDef.offset",
	"PyCFunctionObject.m_ml",
	"PyCFunctionObject.m_self",
	"PyMethodDef.ml_name",
	"PyMethodDef.ml_meth",
	"wrapperobject.descr",
	"wrapperobject.self",
	"PyWrapperDescrObject.d_base",
	"wrapperbase.name",
	"wrapperbase.wrapper",

	// The exception a thread is handling (py-exc, dump): the thread's
	// exc_info stack item, the exception's args and traceback, and the
	// traceback's frames (tb_lineno is -1 until asked for from 3.12 on,
	// when tb_lasti gives the line).
	"PyThreadState.exc_info",
	"_PyErr_StackItem.exc_value",
	"_PyErr_StackItem.previous_item",
	"PyBaseExceptionObject.args",
	"PyBaseExceptionObject.traceback",
	"PyTracebackObject.tb_next",
	"PyTracebackObject.tb_frame",
	"PyTracebackObject.tb_lasti",
	"PyTracebackObject.tb_lineno",

	// asyncio tasks (dump --tasks, py-tasks). Coroutines and generators
	// embed their _PyInterpreterFrame from 3.11 on. Tasks and futures are
	// the _asyncio extension's (Modules/_asynciomodule.c: a lib-dynload
	// module whose DWARF Generate reads beside the interpreter's, or built
	// in). C names a Task's future members task_state, task_callback0...
	// (FutureObj_HEAD(task)): they sit where a Future's fut_* do, so the
	// FutureObj keys serve both. Up to 3.13 the tasks are found from the
	// interpreter's modules: asyncio.tasks's _all_tasks (up to 3.11) or
	// _scheduled_tasks (3.12+), a weakref.WeakSet whose instance dict's
	// "data" is a set of weak references, and _eager_tasks (3.12+), a set.
	"PyGenObject.gi_iframe",      // 3.11+
	"PyGenObject.gi_frame_state", // 3.11+
	"PyGenObject.gi_frame",       // up to 3.10
	"TaskObj.task_coro",          //
	"TaskObj.task_name",          //
	"TaskObj.task_fut_waiter",    //
	"TaskObj.task_is_done",       // 3.14+
	"FutureObj.fut_state",        //
	"FutureObj.fut_callback0",    //
	"FutureObj.fut_callbacks",    //
	"FutureObj.fut_awaited_by",   // 3.14+
	"PySetObject.fill",           //
	"PySetObject.used",           //
	"PySetObject.mask",           //
	"PySetObject.table",          //
	"setentry.key",               //
	"setentry.hash",              //
	"PyWeakReference.wr_object",  //
}

// sizes are the types whose sizes the walker needs (a compact string's
// characters follow its header).
var sizes = []string{
	"PyObject",
	"PyVarObject",
	"PyASCIIObject",
	"PyCompactUnicodeObject",
	"_PyInterpreterFrame",
	"PyThreadState",
	"PyDictKeyEntry",
	"PyDictUnicodeEntry", // 3.11+
	"_gil_runtime_state", // a futex inside it is a wait for the GIL
	"setentry",           // a set's table is an array of them
	"PyMemberDef",        // a type's tp_members is an array of them
}

// enums are the C enums whose constants the walker compares with what
// it reads, under "ENUM.CONSTANT" ("PyFrameState.FRAME_SUSPENDED"), each
// with the names C gives it (a typedef, or the enum's tag where a version
// has no typedef): a coroutine's frame state (3.11+; the values move in
// 3.13 and 3.15, where only the tag _framestate names it) and a future's
// (the _asyncio extension's fut_state: STATE_PENDING, STATE_CANCELLED,
// STATE_FINISHED).
var enums = []struct {
	Key   string
	Names []string
}{
	{"PyFrameState", []string{"PyFrameState", "_framestate"}},
	{"fut_state", []string{"fut_state"}},
}
