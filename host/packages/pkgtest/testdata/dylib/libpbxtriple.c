/* libpbxtriple: a shared library (a WebAssembly side module) that
 * tinyext's extension module needs, as scipy needs libopenblas. */
__attribute__((visibility("default"))) int pbx_triple(int x) { return 3 * x; }
