/* A training loop annotated with nvtxr: nested ranges, colors, categories,
 * payloads, a named thread, a domain with registered strings, and a range
 * that starts on one thread and ends on another.
 *
 * Build it against nvtxr installed in a private prefix (the README's "Install"):
 *   cargo xtask install --prefix $HOME/.local
 *   export PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig PATH=$HOME/.local/bin:$PATH
 *   gcc examples/c/example.c $(pkg-config --cflags --libs nvtxr) -Wl,-rpath,$HOME/.local/lib -pthread -o example
 * then run it with a tool:
 *   nvtxr record -- ./example                              (or: nsys profile ./example)
 */
#include <nvtxr.h>

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { CATEGORY_COMPUTE = 1, CATEGORY_IO = 2 };

static nvtxr_event_t event(const nvtxr_string_t *message, uint32_t argb, uint32_t category) {
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.registered_message = message;
    e.color_type = NVTXR_COLOR_ARGB;
    e.color = argb;
    e.category = category;
    return e;
}

static void *prefetch(void *arg) {
    uint64_t *load_range = arg;
    nvtxr_name_current_thread("prefetcher");
    usleep(4000); /* stand-in work, so the timeline has something to show */
    nvtxr_mark(NULL, "prefetch done");
    nvtxr_range_end(NULL, *load_range); /* started on the main thread */
    return NULL;
}

int main(void) {
    nvtxr_name_current_thread("trainer");
    nvtxr_domain_t *train = nvtxr_domain_create("training");
    nvtxr_name_category(train, CATEGORY_COMPUTE, "compute");
    nvtxr_name_category(train, CATEGORY_IO, "io");
    const nvtxr_string_t *epoch_s = nvtxr_string_register(train, "epoch");
    const nvtxr_string_t *forward_s = nvtxr_string_register(train, "forward");
    const nvtxr_string_t *backward_s = nvtxr_string_register(train, "backward");

    uint64_t load = nvtxr_range_start(NULL, "load data");
    pthread_t t;
    pthread_create(&t, NULL, prefetch, &load);
    pthread_join(t, NULL);

    for (int epoch = 0; epoch < 2; epoch++) {
        nvtxr_event_t e = event(epoch_s, 0xFF4C9AFFu, 0);
        e.payload_type = NVTXR_PAYLOAD_I32;
        e.payload.as_i32 = epoch;
        nvtxr_range_push_ex(train, &e);
        for (int step = 0; step < 2; step++) {
            nvtxr_event_t f = event(forward_s, 0xFF76B900u, CATEGORY_COMPUTE);
            nvtxr_range_push_ex(train, &f);
            usleep(2000);
            nvtxr_range_pop(train);
            nvtxr_event_t b = event(backward_s, 0xFFE6522Cu, CATEGORY_COMPUTE);
            nvtxr_range_push_ex(train, &b);
            usleep(3000);
            nvtxr_range_pop(train);
        }
        nvtxr_event_t loss = NVTXR_EVENT_INIT;
        loss.message = "loss";
        loss.payload_type = NVTXR_PAYLOAD_F64;
        loss.payload.as_f64 = 1.0 / (epoch + 1);
        nvtxr_mark_ex(train, &loss);
        nvtxr_range_pop(train);
    }
    nvtxr_domain_destroy(train);
    printf("example: trained 2 epochs (tool attached: %s)\n", nvtxr_tool_attached() ? "yes" : "no");
    return 0;
}
