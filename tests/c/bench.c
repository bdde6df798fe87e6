/* Per-call cost of NVTX calls through one producer (see producer.h).
 * Prints "op ns_per_call" lines. Under valgrind it runs each op a fixed
 * number of times between callgrind dumps named after the op, so
 * instructions per call can be read from the dumps. */
#include "producer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <valgrind/callgrind.h>

static p_domain domain;
static p_string registered;

static void op_mark(void) { P_MARK("mark"); }
static void op_push_pop(void) { P_PUSH("range"); P_POP(); }
static void op_start_end(void) { P_END(P_START("range")); }
static void op_domain_string(void) { P_DOMAIN_PUSH_STRING(domain, registered); P_DOMAIN_POP(domain); }
static void op_domain_attributes(void) {
    P_DOMAIN_PUSH_FULL(domain, "attributes", 0xFF76B900u, 1, 2.5);
    P_DOMAIN_POP(domain);
}

static const struct { const char *name; void (*run)(void); } ops[] = {
    {"mark", op_mark},
    {"push+pop", op_push_pop},
    {"start+end", op_start_end},
    {"domain push+pop, registered string", op_domain_string},
    {"domain push+pop, full attributes", op_domain_attributes},
};

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 2000000;
    domain = P_DOMAIN_CREATE("bench");
    registered = P_REGISTER(domain, "registered");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        void (*run)(void) = ops[i].run;
        for (long n = 0; n < 1000; n++) run(); /* warm */
        if (RUNNING_ON_VALGRIND) {
            CALLGRIND_ZERO_STATS;
            for (long n = 0; n < iterations; n++) run();
            CALLGRIND_DUMP_STATS_AT(ops[i].name);
            continue;
        }
        double best = 1e300;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_ns();
            for (long n = 0; n < iterations; n++) run();
            double per = (now_ns() - t0) / iterations;
            if (per < best) best = per;
        }
        printf("%s\t%.2f\n", ops[i].name, best);
    }
    return 0;
}
