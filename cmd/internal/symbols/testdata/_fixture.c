/*
 * A tiny CPython extension module for the tests of package symbols:
 * mypkg._fixture.add(a, b) calls fixture_add, where the gdb test stops.
 *
 * gcc -g -O0 -fPIC -shared -I/usr/include/python3.11 \
 *     -o _fixture.cpython-311-x86_64-linux-gnu.so _fixture.c
 *
 * -DFIXTURE_VARIANT=n builds a different object (another build-id), the
 * way a rebuilt wheel differs from the one a debug zip was made from.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef FIXTURE_VARIANT
#define FIXTURE_VARIANT 0
#endif

int fixture_add(int a, int b)
{
	int sum = a + b + FIXTURE_VARIANT;
	return sum;
}

static PyObject *add(PyObject *self, PyObject *args)
{
	int a, b;
	if (!PyArg_ParseTuple(args, "ii", &a, &b))
		return NULL;
	return PyLong_FromLong(fixture_add(a, b));
}

static PyMethodDef methods[] = {
	{"add", add, METH_VARARGS, "Add two ints in C."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_fixture", NULL, -1, methods,
};

PyMODINIT_FUNC PyInit__fixture(void)
{
	return PyModule_Create(&module);
}
