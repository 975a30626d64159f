// A shared library that registers no algorithm: load_plugin must refuse it, by name.
extern "C" int ranklab_test_plugin_empty_marker() { return 42; }
