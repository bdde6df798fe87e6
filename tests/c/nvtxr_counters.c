/* counters.c through nvtxr's own C API (nvtxr.h): the same counters, steps
 * and samples, so the recording test checks both alike; then a batch of
 * samples taken earlier, each right after a "taken" mark, submitted in one
 * call. */
#include <nvtxr.h>

#include <stdio.h>

int main(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("train");
    uint64_t batches = nvtxr_counter_register(d, "batches", NVTXR_COUNTER_INT64);
    uint64_t loss = nvtxr_counter_register(d, "loss", NVTXR_COUNTER_FLOAT64);
    for (int i = 0; i < 5; i++) {
        nvtxr_range_push(NULL, "step");
        nvtxr_counter_sample_int64(d, batches, 10 * i);
        nvtxr_counter_sample_float64(d, loss, 1.0 / (i + 1));
        nvtxr_range_pop(NULL);
    }
    printf("counters %d %d\n", batches != 0, loss != 0);

    uint64_t queue = nvtxr_counter_register(d, "queue", NVTXR_COUNTER_INT64);
    int64_t values[3], times[3];
    for (int i = 0; i < 3; i++) {
        nvtxr_mark(NULL, "taken");
        times[i] = nvtxr_timestamp();
        values[i] = 100 + i;
    }
    nvtxr_status_t submitted = nvtxr_counter_batch_int64(d, queue, values, times, 3);
    nvtxr_status_t missing = nvtxr_counter_batch_int64(d, queue, NULL, times, 3);
    nvtxr_status_t empty = nvtxr_counter_batch_float64(d, loss, NULL, NULL, 0);
    nvtxr_mark(NULL, "submitted");
    printf("batch %d %d %d\n", submitted, missing, empty);
    return 0;
}
