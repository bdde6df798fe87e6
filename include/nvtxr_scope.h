/*
 * nvtxr_scope.h: scoped ranges for C (GCC and Clang), on top of nvtxr.h.
 *
 *   void step(void) {
 *       NVTXR_FUNC_RANGE();                          // "step", registered once per call site
 *       for (int i = 0; i < n; i++) {
 *           NVTXR_SCOPED_RANGE(NULL, "iteration");   // popped when the block exits
 *           ...
 *       }
 *   }
 *
 * The range is popped when the enclosing block exits by any path (return,
 * break, goto, end of block), through the compiler's cleanup attribute.
 * A range whose push nvtxr refused (bad input) is not popped. Not for blocks
 * left by longjmp, which skips cleanups.
 */
#ifndef NVTXR_SCOPE_H
#define NVTXR_SCOPE_H

#include <nvtxr.h>

#if !defined(__GNUC__) && !defined(__clang__)
#error "nvtxr_scope.h needs the cleanup attribute of GCC or Clang"
#endif

/** What a scoped range needs to pop itself. */
typedef struct nvtxr_scope_t {
    const nvtxr_domain_t *domain;
    bool active;
} nvtxr_scope_t;

/** Wraps a push's result: active unless nvtxr refused the push. */
static inline nvtxr_scope_t nvtxr_scope_from(const nvtxr_domain_t *domain, int32_t pushed) {
    nvtxr_scope_t scope = {domain, !NVTXR_IS_ERROR(pushed)};
    return scope;
}

static inline nvtxr_scope_t nvtxr_scope_push(const nvtxr_domain_t *domain, const char *message) {
    return nvtxr_scope_from(domain, nvtxr_range_push(domain, message));
}

static inline nvtxr_scope_t nvtxr_scope_push_string(const nvtxr_domain_t *domain, const nvtxr_string_t *string) {
    return nvtxr_scope_from(domain, nvtxr_range_push_string(domain, string));
}

static inline nvtxr_scope_t nvtxr_scope_push_ex(const nvtxr_domain_t *domain, const nvtxr_event_t *event) {
    return nvtxr_scope_from(domain, nvtxr_range_push_ex(domain, event));
}

/** The cleanup function of the macros. */
static inline void nvtxr_scope_pop(nvtxr_scope_t *scope) {
    if (scope->active) {
        nvtxr_range_pop(scope->domain);
    }
}

/** `*cache`, registering `text` in the default domain on first use (thread-safe). */
static inline const nvtxr_string_t *nvtxr_scope_string(const nvtxr_string_t **cache, const char *text) {
    const nvtxr_string_t *s = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (s == NULL) {
        /* Racing threads register the same text and get the same handle. */
        s = nvtxr_string_register(NULL, text);
        __atomic_store_n(cache, s, __ATOMIC_RELEASE);
    }
    return s;
}

#define NVTXR_CONCAT_(a, b) a##b
#define NVTXR_CONCAT(a, b) NVTXR_CONCAT_(a, b)

/** A push/pop range with a text message, popped when the enclosing block exits. */
#define NVTXR_SCOPED_RANGE(domain, message)                                                     \
    __attribute__((cleanup(nvtxr_scope_pop), unused)) nvtxr_scope_t NVTXR_CONCAT(nvtxr_scope_, \
                                                                                 __LINE__) =    \
        nvtxr_scope_push((domain), (message))

/** `NVTXR_SCOPED_RANGE` with full attributes (`const nvtxr_event_t *`). */
#define NVTXR_SCOPED_RANGE_EX(domain, event)                                                    \
    __attribute__((cleanup(nvtxr_scope_pop), unused)) nvtxr_scope_t NVTXR_CONCAT(nvtxr_scope_, \
                                                                                 __LINE__) =    \
        nvtxr_scope_push_ex((domain), (event))

/** A range named after the enclosing function (`__func__`) in the default
 *  domain, registered once per call site, popped when the block exits. */
#define NVTXR_FUNC_RANGE()                                                                      \
    static const nvtxr_string_t *NVTXR_CONCAT(nvtxr_func_string_, __LINE__);                    \
    __attribute__((cleanup(nvtxr_scope_pop), unused)) nvtxr_scope_t NVTXR_CONCAT(nvtxr_scope_, \
                                                                                 __LINE__) =    \
        nvtxr_scope_push_string(NULL, nvtxr_scope_string(&NVTXR_CONCAT(nvtxr_func_string_, __LINE__), __func__))

#endif /* NVTXR_SCOPE_H */
