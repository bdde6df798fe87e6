/* The calling thread's event writer, in initial-exec TLS.
 *
 * Rust's thread locals in a dlopen()ed library are reached through
 * __tls_get_addr, which allocates a thread's block with malloc on its first
 * access: a signal handler recording an event while its thread was inside
 * that malloc (or any malloc, for the thread's first event) re-entered malloc
 * and corrupted the heap. Initial-exec TLS is set up when the library is
 * loaded, from the static TLS glibc reserves for dlopen()ed libraries: a load
 * of one word, no call, no allocation, async-signal-safe. */
#include <stdbool.h>

static __thread void *current __attribute__((tls_model("initial-exec")));

void *nvtxr_record_current(void) { return current; }

/* Installs `writer` if the slot still holds `expected` (a signal handler may
   have installed one meanwhile). */
bool nvtxr_record_install(void *expected, void *writer) {
    return __atomic_compare_exchange_n(&current, &expected, writer, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}
