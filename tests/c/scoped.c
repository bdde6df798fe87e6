/* The C macros of nvtxr_scope.h: every exit path pops its range. */
#include <nvtxr_scope.h>

#include <stdio.h>

static int early_return(int x) {
    NVTXR_FUNC_RANGE();
    if (x > 0) {
        NVTXR_SCOPED_RANGE(NULL, "positive");
        return 1; /* pops "positive", then "early_return" */
    }
    return 0;
}

static void loop_with_break(void) {
    NVTXR_FUNC_RANGE();
    for (int i = 0; i < 3; i++) {
        NVTXR_SCOPED_RANGE(NULL, "iteration");
        if (i == 1) break;
    }
}

int main(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("scoped");
    {
        nvtxr_event_t e = NVTXR_EVENT_INIT;
        e.message = "colored";
        e.color_type = NVTXR_COLOR_ARGB;
        e.color = 0xFF0000FFu;
        NVTXR_SCOPED_RANGE_EX(d, &e);
        NVTXR_SCOPED_RANGE(d, "inner");
    }
    early_return(1);
    early_return(0);
    loop_with_break();
    {
        NVTXR_SCOPED_RANGE(NULL, NULL); /* refused (NULL message): must not pop */
    }
    nvtxr_domain_destroy(d);
    printf("done\n");
    return 0;
}
