/* One scenario through producer.h: run once on nvtxr and once on NVIDIA's
 * libnvtx3interop.so.1 under the event-log tool, the event logs must be equal. */
#include "producer.h"

#include <stdio.h>

int main(void) {
    P_INITIALIZE();
    P_NAME_THREAD("main");
    P_NAME_CATEGORY(1, "compute");
    P_MARK("start");
    P_MARK_FULL("checkpoint", 0xFF00FF00u, 1, 0.75);
    printf("push %d\n", (int)P_PUSH("epoch 1"));
    P_PUSH_FULL("forward", 0xFFFF0000u, 1, 3.0);
    printf("pop %d\n", (int)P_POP());
    printf("pop %d\n", (int)P_POP());
    uint64_t a = P_START("async");
    uint64_t b = P_START_FULL("async full", 0xFF0000FFu, 2, -1.5);
    P_END(b);
    P_END(a);
    printf("ids %llu %llu\n", (unsigned long long)a, (unsigned long long)b);

    p_domain d = P_DOMAIN_CREATE("trainer");
    p_string step = P_REGISTER(d, "step");
    P_DOMAIN_NAME_CATEGORY(d, 4, "io");
    P_DOMAIN_MARK(d, "domain mark");
    P_DOMAIN_MARK_STRING(d, step);
    printf("dpush %d\n", (int)P_DOMAIN_PUSH_STRING(d, step));
    printf("dpush %d\n", (int)P_DOMAIN_PUSH_FULL(d, "load", 0x80808080u, 4, 42.0));
    printf("dpop %d\n", (int)P_DOMAIN_POP(d));
    printf("dpop %d\n", (int)P_DOMAIN_POP(d));
    uint64_t c = P_DOMAIN_START_STRING(d, step);
    P_DOMAIN_END(d, c);
    P_NAME_CU_DEVICE(0, "gpu 0");
    P_NAME_CU_STREAM((void *)0x10, "stream");
    P_NAME_CUDA_DEVICE(1, "gpu 1");
    P_NAME_CUDA_EVENT((void *)0x20, "event");
    P_DOMAIN_DESTROY(d);
    printf("unbalanced pop %d\n", (int)P_POP());
    return 0;
}
