/* Test scenarios for nvtxr's C ABI. `scenarios NAME` runs one; return values
 * are printed to stdout so tests can assert them next to what the tool got. */
#include <nvtxr.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void basic(void) {
    nvtxr_mark(NULL, "hello");
    printf("push -> %d\n", nvtxr_range_push(NULL, "outer"));
    printf("push -> %d\n", nvtxr_range_push(NULL, "inner"));
    printf("pop -> %d\n", nvtxr_range_pop(NULL));
    printf("pop -> %d\n", nvtxr_range_pop(NULL));
    uint64_t id = nvtxr_range_start(NULL, "async");
    printf("start -> %llu\n", (unsigned long long)id);
    printf("end -> %d\n", nvtxr_range_end(NULL, id));
}

static void attributes(void) {
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.message = "colored";
    e.color_type = NVTXR_COLOR_ARGB;
    e.color = 0xFF00FF00u;
    e.category = 7;
    nvtxr_mark_ex(NULL, &e);

    nvtxr_event_t p = NVTXR_EVENT_INIT;
    p.message = "payload";
    p.payload_type = NVTXR_PAYLOAD_U64; p.payload.as_u64 = 18446744073709551615ull; nvtxr_mark_ex(NULL, &p);
    p.payload_type = NVTXR_PAYLOAD_I64; p.payload.as_i64 = -42; nvtxr_mark_ex(NULL, &p);
    p.payload_type = NVTXR_PAYLOAD_F64; p.payload.as_f64 = 0.5; nvtxr_mark_ex(NULL, &p);
    p.payload_type = NVTXR_PAYLOAD_U32; p.payload.as_u32 = 4000000000u; nvtxr_mark_ex(NULL, &p);
    p.payload_type = NVTXR_PAYLOAD_I32; p.payload.as_i32 = -7; nvtxr_mark_ex(NULL, &p);
    p.payload_type = NVTXR_PAYLOAD_F32; p.payload.as_f32 = 1.25f; nvtxr_mark_ex(NULL, &p);

    nvtxr_event_t none = NVTXR_EVENT_INIT;
    nvtxr_mark_ex(NULL, &none);
    printf("push_ex -> %d\n", nvtxr_range_push_ex(NULL, &e));
    printf("pop -> %d\n", nvtxr_range_pop(NULL));
    uint64_t id = nvtxr_range_start_ex(NULL, &e);
    printf("end -> %d\n", nvtxr_range_end(NULL, id));

    /* Registered strings of the default domain go through the domain API. */
    const nvtxr_string_t *s = nvtxr_string_register(NULL, "registered");
    nvtxr_mark_string(NULL, s);
    nvtxr_event_t r = NVTXR_EVENT_INIT;
    r.registered_message = s;
    r.payload_type = NVTXR_PAYLOAD_I32;
    r.payload.as_i32 = 3;
    nvtxr_mark_ex(NULL, &r);
}

static void domains(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("trainer");
    nvtxr_domain_t *again = nvtxr_domain_create("trainer");
    printf("same handle: %d\n", d == again);
    const nvtxr_string_t *s1 = nvtxr_string_register(d, "step");
    const nvtxr_string_t *s2 = nvtxr_string_register(d, "step");
    printf("same string: %d\n", s1 == s2);
    printf("name category -> %d\n", nvtxr_name_category(d, 1, "io"));
    nvtxr_mark(d, "domain mark");
    nvtxr_mark_string(d, s1);
    printf("push -> %d\n", nvtxr_range_push_string(d, s1));
    printf("pop -> %d\n", nvtxr_range_pop(d));
    uint64_t id = nvtxr_range_start_string(d, s1);
    printf("end -> %d\n", nvtxr_range_end(d, id));
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.registered_message = s1;
    e.category = 1;
    e.color_type = NVTXR_COLOR_ARGB;
    e.color = 0x80123456u;
    nvtxr_mark_ex(d, &e);
    printf("destroy -> %d\n", nvtxr_domain_destroy(d)); /* one of two references */
    printf("mark after first destroy -> %d\n", nvtxr_mark(d, "still alive"));
    printf("destroy -> %d\n", nvtxr_domain_destroy(again)); /* the last one: tool destroys */
    printf("destroy again -> %d\n", nvtxr_domain_destroy(d));
    printf("mark after destroy -> %d\n", nvtxr_mark(d, "dropped"));
    printf("push after destroy -> %d\n", nvtxr_range_push(d, "dropped"));
    printf("pop after destroy -> %d\n", nvtxr_range_pop(d));
    printf("start after destroy -> %llu\n", (unsigned long long)nvtxr_range_start(d, "dropped"));
    printf("end after destroy -> %d\n", nvtxr_range_end(d, 5));
    printf("string after destroy -> %d\n", nvtxr_mark_string(d, s1));
    printf("register after destroy -> %s\n", nvtxr_string_register(d, "late") ? "handle" : "NULL");
    printf("category after destroy -> %d\n", nvtxr_name_category(d, 2, "late"));
    printf("destroy default -> %d\n", nvtxr_domain_destroy(NULL));
    nvtxr_domain_t *revived = nvtxr_domain_create("trainer");
    printf("revived same handle: %d\n", revived == d);
    printf("string after revive -> %d\n", nvtxr_mark_string(revived, s1));
    nvtxr_domain_t *other = nvtxr_domain_create("other");
    printf("foreign string -> %d\n", nvtxr_mark_string(other, s1));
}

static void naming(void) {
    printf("name thread -> %d\n", nvtxr_name_current_thread("main thread"));
    printf("name tid -> %d\n", nvtxr_name_os_thread(4242, "worker 4242"));
    nvtxr_name_category(NULL, 3, "default-domain category");
    nvtxr_name_cu_device(0, "cu device 0");
    nvtxr_name_cu_context((void *)0x1000, "cu context");
    nvtxr_name_cu_stream((void *)0x2000, "cu stream");
    nvtxr_name_cu_event((void *)0x3000, "cu event");
    nvtxr_name_cuda_device(1, "cuda device 1");
    nvtxr_name_cuda_stream((void *)0x4000, "cuda stream");
    nvtxr_name_cuda_event((void *)0x5000, "cuda event");
}

static void bad_input(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("bad");
    nvtxr_domain_t *other = nvtxr_domain_create("other");
    const nvtxr_string_t *s = nvtxr_string_register(other, "elsewhere");
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    printf("mark NULL message -> %d\n", nvtxr_mark(NULL, NULL));
    printf("mark_ex NULL event -> %d\n", nvtxr_mark_ex(d, NULL));
    printf("mark_string NULL -> %d\n", nvtxr_mark_string(d, NULL));
    e.payload_type = 99;
    printf("bad payload type -> %d\n", nvtxr_mark_ex(d, &e));
    e.payload_type = 0;
    e.color_type = 7;
    printf("bad color type -> %d\n", nvtxr_mark_ex(d, &e));
    e.color_type = 0;
    e.message = "text";
    e.registered_message = s;
    printf("both messages -> %d\n", nvtxr_mark_ex(d, &e));
    printf("foreign string -> %d\n", nvtxr_mark_string(d, s));
    printf("push NULL -> %d\n", nvtxr_range_push(NULL, NULL));
    printf("start NULL -> %llu\n", (unsigned long long)nvtxr_range_start(NULL, NULL));
    printf("unbalanced pop -> %d\n", nvtxr_range_pop(NULL));
    printf("end 0 -> %d\n", nvtxr_range_end(NULL, 0));
    printf("end unknown -> %d\n", nvtxr_range_end(NULL, 0x123456789abcull));
    uint64_t id = nvtxr_range_start(NULL, "twice");
    printf("end -> %d\n", nvtxr_range_end(NULL, id));
    printf("end again -> %d\n", nvtxr_range_end(NULL, id));
    printf("invalid utf8 -> %d\n", nvtxr_mark(NULL, "bad \xff\xfe utf8"));
    printf("domain NULL name -> %s\n", nvtxr_domain_create(NULL) ? "handle" : "NULL");
    printf("register NULL -> %s\n", nvtxr_string_register(d, NULL) ? "handle" : "NULL");
    printf("name thread NULL -> %d\n", nvtxr_name_current_thread(NULL));
    printf("name category NULL -> %d\n", nvtxr_name_category(d, 1, NULL));
    printf("cuda NULL name -> %d\n", nvtxr_name_cuda_device(0, NULL));
    nvtxr_mark(NULL, "still working");
}

static void version(void) {
    printf("header %s %d\n", NVTXR_VERSION_STRING, NVTXR_VERSION);
    printf("runtime %s %u\n", nvtxr_version_string(), nvtxr_version());
}

static void status(void) {
    bool attached = nvtxr_initialize();
    const char *err = nvtxr_load_error();
    printf("attached %d\n", attached);
    printf("tool_attached %d\n", nvtxr_tool_attached());
    printf("error %s\n", err ? err : "(none)");
    nvtxr_mark(NULL, "after init");
}

/* 16 threads make their first NVTX call at once, 3 events each. */
#define RACERS 16
static pthread_barrier_t barrier;
static void *racer(void *arg) {
    char msg[32];
    snprintf(msg, sizeof msg, "racer %d", (int)(intptr_t)arg);
    pthread_barrier_wait(&barrier);
    nvtxr_mark(NULL, msg);
    nvtxr_range_push(NULL, msg);
    nvtxr_range_pop(NULL);
    return NULL;
}
static void race(void) {
    pthread_t t[RACERS];
    pthread_barrier_init(&barrier, NULL, RACERS);
    for (int i = 0; i < RACERS; i++) pthread_create(&t[i], NULL, racer, (void *)(intptr_t)i);
    for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    printf("all joined\n");
}

static int wait_child(pid_t pid) {
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Initialize, then fork: the child keeps the attached tool. */
static void fork_after_init(void) {
    nvtxr_mark(NULL, "parent before fork");
    pid_t pid = fork();
    if (pid == 0) {
        nvtxr_mark(NULL, "child");
        _exit(0);
    }
    printf("child exit %d\n", wait_child(pid));
    nvtxr_mark(NULL, "parent after fork");
}

/* Fork while another thread is inside the tool's (slow) initialization. */
static volatile int calling;
static void *first_call(void *arg) {
    (void)arg;
    __atomic_store_n(&calling, 1, __ATOMIC_SEQ_CST);
    nvtxr_mark(NULL, "parent thread");
    return NULL;
}
static void fork_during_init(void) {
    pthread_t t;
    pthread_create(&t, NULL, first_call, NULL);
    while (!__atomic_load_n(&calling, __ATOMIC_SEQ_CST)) usleep(1000);
    usleep(100 * 1000); /* the tool sleeps 500 ms in its init: fork inside it */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a hang fails the test instead of blocking it */
        nvtxr_mark(NULL, "child during parent init");
        _exit(0);
    }
    printf("child exit %d\n", wait_child(pid));
    pthread_join(t, NULL);
}

/* Many fresh processes, each forking while another of its threads makes the
   first NVTX call: wherever the fork lands (before, inside or after the
   loader's setup), the child must finish. A hang ends in SIGALRM. */
static void *mark_first(void *arg) {
    __atomic_store_n((volatile int *)arg, 1, __ATOMIC_SEQ_CST);
    nvtxr_mark(NULL, "first call");
    return NULL;
}
static void fork_race(void) {
    enum { TRIALS = 200 };
    int stuck = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        pid_t process = fork(); /* fresh: this process never called NVTX */
        if (process == 0) {
            volatile int started = 0;
            pthread_t t;
            pthread_create(&t, NULL, mark_first, (void *)&started);
            while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST)) {}
            for (volatile int spin = 0; spin < trial * 20; spin++) {}
            pid_t child = fork();
            if (child == 0) {
                alarm(5);
                nvtxr_mark(NULL, "in the child");
                _exit(0);
            }
            int status = wait_child(child);
            pthread_join(t, NULL);
            _exit(status == 0 ? 0 : 1);
        }
        if (wait_child(process) != 0) stuck++;
    }
    printf("stuck %d of %d\n", stuck, TRIALS);
}

/* Fork while another thread is inside nvtxr_domain_create (the tool is slow to create it). */
static volatile int creating;
static void *create_slowly(void *arg) {
    (void)arg;
    __atomic_store_n(&creating, 1, __ATOMIC_SEQ_CST);
    nvtxr_domain_create("slow");
    return NULL;
}
static void fork_during_domain_create(void) {
    nvtxr_mark(NULL, "initialized");
    pthread_t t;
    pthread_create(&t, NULL, create_slowly, NULL);
    while (!__atomic_load_n(&creating, __ATOMIC_SEQ_CST)) usleep(1000);
    usleep(100 * 1000);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        nvtxr_domain_t *d = nvtxr_domain_create("child");
        nvtxr_mark(d, "child domain works");
        _exit(0);
    }
    printf("child exit %d\n", wait_child(pid));
    pthread_join(t, NULL);
}

static void reenter(void) {
    alarm(10);
    nvtxr_mark(NULL, "first");
    nvtxr_mark(NULL, "second");
    printf("returned\n");
}

/* The program's first nvtxr call registers a string (as NVTXR_FUNC_RANGE
   does); the tool creates a domain and strings from inside its init. */
static void register_first(void) {
    alarm(10);
    const nvtxr_string_t *first = nvtxr_string_register(NULL, "first call");
    nvtxr_mark_string(NULL, first);
    nvtxr_domain_t *d = nvtxr_domain_create("made in init");
    nvtxr_mark_string(d, nvtxr_string_register(d, "string from init"));
    nvtxr_mark_string(NULL, nvtxr_string_register(NULL, "default string from init"));
    nvtxr_mark(d, "text in made in init");
    printf("returned\n");
}

/* A domain whose creation the tool answers by calling nvtxr and forking. */
static void hostile_domain(void) {
    alarm(10);
    nvtxr_domain_t *d = nvtxr_domain_create("hostile");
    nvtxr_mark(d, "after");
    printf("returned\n");
}

/* Handles nvtxr never made: each cheap check refuses them instead of crashing. */
static void forged_handles(void) {
    alarm(10);
    char *heap = malloc(64);
    void *forged[] = {(void *)0x10, (void *)0x1000, heap + 1, (void *)0xffff800000001000ull};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        nvtxr_domain_t *d = forged[i];
        const nvtxr_string_t *s = forged[i];
        printf("%zu destroy %d register %d mark %d push_string %d\n", i,
               nvtxr_domain_destroy(d) == NVTXR_ERROR_INVALID_ARGUMENT,
               nvtxr_string_register(d, "x") == NULL,
               nvtxr_mark(d, "x") == (nvtxr_tool_attached() ? NVTXR_ERROR_INVALID_ARGUMENT : NVTXR_OK),
               nvtxr_range_push_string(NULL, s) == (nvtxr_tool_attached() ? NVTXR_ERROR_INVALID_ARGUMENT : NVTXR_NO_PUSH_POP_TRACKING));
    }
    free(heap);
}

/* Threads mark in a domain, by text and by a registered string, while the
   main thread destroys and recreates it. */
static nvtxr_domain_t *racy;
static const nvtxr_string_t *racy_string;
static volatile int racing = 1;
static void *mark_in_racy(void *arg) {
    (void)arg;
    while (racing) {
        nvtxr_mark(racy, "in racy");
        nvtxr_mark_string(racy, racy_string);
    }
    return NULL;
}
static void destroy_race(void) {
    alarm(30);
    racy = nvtxr_domain_create("racy");
    racy_string = nvtxr_string_register(racy, "in racy, registered");
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, mark_in_racy, NULL);
    for (int i = 0; i < 300; i++) {
        nvtxr_domain_destroy(racy);
        usleep(100);
        nvtxr_domain_create("racy"); /* the same handle, revived */
        usleep(100);
    }
    racing = 0;
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    printf("returned\n");
}

/* A signal handler creates domains and registers strings while the thread it
   interrupts does the same: refused (NULL) or done, never a deadlock. */
static volatile sig_atomic_t handled, refused;
static void register_in_handler(int sig) {
    (void)sig;
    nvtxr_domain_t *d = nvtxr_domain_create("from handler");
    const nvtxr_string_t *s = nvtxr_string_register(d, "handler string");
    if (!d || !s) refused++;
    nvtxr_mark(NULL, "handler mark");
    handled++;
}
static void signal_register(void) {
    alarm(20);
    nvtxr_mark(NULL, "attached");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = register_in_handler;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval every = {{0, 100}, {0, 100}};
    setitimer(ITIMER_PROF, &every, NULL);
    char text[32];
    for (int i = 0; handled < 200; i++) {
        snprintf(text, sizeof text, "main %d", i % 1000);
        nvtxr_string_register(nvtxr_domain_create("main"), text);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("handled %d\n", (int)handled);
}

/* nvtxr_event_t's size: a caller built against an older, smaller header
   (here: one that ended before the payload) has only what its size covers
   read; an uninitialized size is an error. */
static void event_size(void) {
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.message = "older header";
    e.color_type = NVTXR_COLOR_ARGB;
    e.color = 0xFF112233u;
    e.payload_type = NVTXR_PAYLOAD_U64; /* beyond the smaller size: never read */
    e.payload.as_u64 = 7;
    e.size = (uint32_t)offsetof(nvtxr_event_t, payload_type);
    printf("smaller %d\n", nvtxr_mark_ex(NULL, &e));
    e.size = (uint32_t)sizeof(nvtxr_event_t);
    printf("full %d\n", nvtxr_mark_ex(NULL, &e));
    nvtxr_event_t zero = {0};
    zero.message = "not initialized";
    printf("size 0 %d\n", nvtxr_mark_ex(NULL, &zero));
    e.size = 4096; /* a newer, bigger header: what nvtxr knows is read */
    printf("bigger %d\n", nvtxr_mark_ex(NULL, &e));
}

/* A string handle where a domain is expected, and the reverse: refused. */
static void is_enabled(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("asked");
    int of_default = nvtxr_domain_is_enabled(NULL);
    int of_domain = nvtxr_domain_is_enabled(d);
    printf("default %d domain %d\n", of_default, of_domain);
    nvtxr_domain_destroy(d);
    printf("destroyed %d\n", nvtxr_domain_is_enabled(d));
}

static void handle_kinds(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("kinds");
    const nvtxr_string_t *s = nvtxr_string_register(d, "text");
    const nvtxr_domain_t *not_a_domain = (const nvtxr_domain_t *)(const void *)s;
    const nvtxr_string_t *not_a_string = (const nvtxr_string_t *)(const void *)d;
    printf("mark in a string %d\n", nvtxr_mark(not_a_domain, "x"));
    printf("push in a string %d\n", nvtxr_range_push(not_a_domain, "x"));
    printf("register in a string %s\n", nvtxr_string_register(not_a_domain, "x") ? "handle" : "NULL");
    printf("a domain as message %d\n", nvtxr_mark_string(d, not_a_string));
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.registered_message = not_a_string;
    printf("a domain in an event %d\n", nvtxr_mark_ex(d, &e));
    printf("destroy a string %d\n", nvtxr_domain_destroy((nvtxr_domain_t *)(void *)s));
    printf("right kinds %d\n", nvtxr_mark_string(d, s));
}

/* A user synchronization object and OpenCL object names, through nvtxr's own names. */
static void sync_and_opencl(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("locks");
    nvtxr_sync_t *lock = nvtxr_sync_create(d, "work queue");
    printf("sync %s\n", lock ? "created" : "NULL");
    nvtxr_sync_acquire_start(lock);
    nvtxr_sync_acquire_failed(lock);
    nvtxr_sync_acquire_start(lock);
    nvtxr_sync_acquire_success(lock);
    nvtxr_sync_releasing(lock);
    nvtxr_sync_destroy(lock);
    void *cl = (void *)(uintptr_t)0x1000;
    nvtxr_name_cl_device(cl, "gpu0");
    nvtxr_name_cl_context(cl, "ctx");
    nvtxr_name_cl_command_queue(cl, "queue");
    nvtxr_name_cl_mem_object(cl, "buffer");
    nvtxr_name_cl_sampler(cl, "sampler");
    nvtxr_name_cl_program(cl, "program");
    printf("cl event %d\n", nvtxr_name_cl_event(cl, "event"));
    printf("null name %d\n", nvtxr_name_cl_event(cl, NULL));
}

/* Under a tool that fills only the domain slots: domain calls reach it,
   default-domain ones find its empty slots and return the no-tool values,
   and invalid input is still refused. */
static void domains_only(void) {
    nvtxr_domain_t *d = nvtxr_domain_create("lib");
    const nvtxr_string_t *s = nvtxr_string_register(d, "registered");
    printf("domain mark %d\n", nvtxr_mark(d, "in domain"));
    printf("domain push %d\n", nvtxr_range_push_string(d, s));
    printf("domain pop %d\n", nvtxr_range_pop(d));
    printf("default mark %d\n", nvtxr_mark(NULL, "default"));
    printf("default push %d\n", nvtxr_range_push(NULL, "default"));
    printf("default pop %d\n", nvtxr_range_pop(NULL));
    printf("default start %llu\n", (unsigned long long)nvtxr_range_start(NULL, "default"));
    nvtxr_event_t e = NVTXR_EVENT_INIT;
    e.message = "default ex";
    printf("default ex %d\n", nvtxr_mark_ex(NULL, &e));
    printf("null message %d\n", nvtxr_mark(NULL, NULL) == NVTXR_ERROR_NULL_ARGUMENT);
}

int main(int argc, char **argv) {
    static const struct { const char *name; void (*run)(void); } scenarios[] = {
        {"basic", basic}, {"attributes", attributes}, {"domains", domains}, {"naming", naming},
        {"bad_input", bad_input}, {"version", version}, {"status", status}, {"race", race},
        {"fork_after_init", fork_after_init}, {"fork_during_init", fork_during_init}, {"reenter", reenter}, {"fork_race", fork_race},
        {"fork_during_domain_create", fork_during_domain_create},
        {"register_first", register_first}, {"hostile_domain", hostile_domain},
        {"destroy_race", destroy_race}, {"forged_handles", forged_handles}, {"signal_register", signal_register},
        {"event_size", event_size}, {"handle_kinds", handle_kinds}, {"sync_and_opencl", sync_and_opencl},
        {"domains_only", domains_only}, {"is_enabled", is_enabled},
    };
    for (size_t i = 0; argc > 1 && i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].run();
            fflush(stdout);
            return 0;
        }
    }
    fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
    return 2;
}
