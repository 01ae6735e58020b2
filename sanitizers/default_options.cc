// The sanitizer runtimes' default options, compiled into every executable of a MTSERVE_SANITIZE
// build (sanitizers/sanitizers.cmake): each runtime calls its function at start-up, before
// main, and *SAN_OPTIONS in the environment still override what they return. Stopping at the
// first report makes a report fail the test, whatever the test checks of the process.
// (AddressSanitizer stops at its first report by default and needs nothing here.)

extern "C" {

// UBSan stops because of -fno-sanitize-recover; the stack says where the report came from.
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// tsan.supp lists what is suppressed, in Debian's uninstrumented libraries only, each with why.
const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:suppressions=" MTSERVE_TSAN_SUPPRESSIONS;
}

}  // extern "C"
