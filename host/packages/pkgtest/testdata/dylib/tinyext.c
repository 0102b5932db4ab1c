/* tinyext: a CPython extension module for Pyodide (the stable ABI, abi3)
 * whose one function calls into a separate shared library (libpbxtriple),
 * as scipy's modules call libopenblas. No Python.h: the few declarations
 * it needs, as they are on wasm32 (4-byte pointers and Py_ssize_t), so it
 * builds with nothing but clang and wasm-ld (see build.sh). */
typedef struct { int ob_refcnt; void *ob_type; } PyObject;
typedef PyObject *(*PyCFunction)(PyObject *, PyObject *);
typedef struct { const char *ml_name; PyCFunction ml_meth; int ml_flags; const char *ml_doc; } PyMethodDef;
typedef struct { PyObject ob_base; PyObject *(*m_init)(void); int m_index; PyObject *m_copy; } PyModuleDef_Base;
typedef struct {
  PyModuleDef_Base m_base; const char *m_name; const char *m_doc; int m_size;
  PyMethodDef *m_methods; void *m_slots; void *m_traverse; void *m_clear; void *m_free;
} PyModuleDef;

#define METH_O 8
#define PYTHON_ABI_VERSION 3

/* From the interpreter (Pyodide's main module). */
extern PyObject *PyModule_Create2(PyModuleDef *, int);
extern long PyLong_AsLong(PyObject *);
extern PyObject *PyLong_FromLong(long);
/* From libpbxtriple.so (a needed library, found on LD_LIBRARY_PATH). */
extern int pbx_triple(int);

static PyObject *triple(PyObject *self, PyObject *arg) {
  return PyLong_FromLong(pbx_triple((int)PyLong_AsLong(arg)));
}

static PyMethodDef methods[] = {
  {"triple", triple, METH_O, "3*x, computed by libpbxtriple"},
  {0, 0, 0, 0},
};

static PyModuleDef def = {{{1, 0}, 0, 0, 0}, "tinyext", "A test extension module.", -1, methods, 0, 0, 0, 0};

__attribute__((visibility("default"))) PyObject *PyInit_tinyext(void) {
  return PyModule_Create2(&def, PYTHON_ABI_VERSION);
}
