/* One rank of the ranks benchmark: STEPS steps (argv[1]), each a "step"
   range holding LAYERS "layer" ranges (argv[2]); 2 + 2 * LAYERS events a
   step. The rank (RANK) sets how long a layer works, so ranks differ. */
#include <nvtxr.h>

#include <stdlib.h>

int main(int argc, char **argv) {
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    long layers = argc > 2 ? atol(argv[2]) : 199;
    const char *rank_text = getenv("RANK");
    long work = 20 + (rank_text ? atol(rank_text) % 7 : 0) * 5;
    volatile long sink = 0;
    for (long s = 0; s < steps; s++) {
        nvtxr_range_push(NULL, "step");
        for (long l = 0; l < layers; l++) {
            nvtxr_range_push(NULL, "layer");
            for (long i = 0; i < work; i++) sink += i;
            nvtxr_range_pop(NULL);
        }
        nvtxr_range_pop(NULL);
    }
    return sink == -1;
}
