/* Workloads for `nvtxr record` tests: `record_scenarios NAME`. */
#include <nvtxr.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void ranges(const char *name, int count) {
    for (int i = 0; i < count; i++) {
        nvtxr_range_push(NULL, name);
        nvtxr_mark(NULL, "tick");
        nvtxr_range_pop(NULL);
    }
}

/* Three forked workers and one spawned (exec'd) worker, each with its own ranges. */
static void processes(const char *self) {
    nvtxr_name_current_thread("parent");
    nvtxr_range_push(NULL, "parent");
    pid_t pids[4];
    for (int w = 0; w < 3; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            char name[32];
            snprintf(name, sizeof name, "forked worker %d", w);
            nvtxr_name_current_thread(name);
            ranges(name, 50);
            exit(0);
        }
    }
    pids[3] = fork();
    if (pids[3] == 0) {
        execl(self, self, "worker", (char *)NULL);
        _exit(127);
    }
    for (int w = 0; w < 4; w++) waitpid(pids[w], NULL, 0);
    nvtxr_range_pop(NULL);
}

static void worker(void) {
    nvtxr_name_current_thread("exec'd worker");
    ranges("exec'd worker", 50);
}

/* Ranges, then SIGTERM to itself inside an open range. */
static void sigterm(void) {
    ranges("before signal", 10);
    nvtxr_range_push(NULL, "open at signal");
    raise(SIGTERM);
}

/* Ranges until interrupted; says "ready" once some are recorded. */
static void loop(void) {
    ranges("before ready", 5);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        ranges("looping", 1);
        usleep(1000);
    }
}

/* COUNT ranges (a mark in each), then "done PID" and exit: a conversion big
   enough to be interrupted. */
static void bulk(int count) {
    ranges("bulk", count);
    printf("done %d\n", (int)getpid());
    fflush(stdout);
}

static void *exit_from_thread(void *arg) {
    (void)arg;
    nvtxr_name_current_thread("exiting thread");
    ranges("thread work", 5);
    exit(3);
}

/* exit() from a second thread while the main thread is inside a range. */
static void thread_exit(void) {
    nvtxr_range_push(NULL, "main waits");
    pthread_t t;
    pthread_create(&t, NULL, exit_from_thread, NULL);
    pthread_join(t, NULL);
}

/* Many events on several threads: more than one buffer's worth each. */
static void *busy(void *arg) {
    char name[32];
    snprintf(name, sizeof name, "busy %d", (int)(intptr_t)arg);
    nvtxr_name_current_thread(name);
    ranges(name, 20000);
    return NULL;
}
static void many(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, busy, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}

/* Ranges, then death with no chance to clean up: SIGKILL, a segfault, abort(). */
static void die(const char *how) {
    ranges("before death", 1000);
    nvtxr_range_push(NULL, "open at death");
    if (!strcmp(how, "kill")) raise(SIGKILL);
    if (!strcmp(how, "abort")) abort();
    volatile int *nowhere = NULL;
    *nowhere = 1;
}

/* Marks from a signal handler that fires while the thread records. */
static volatile sig_atomic_t handled;
static void on_alarm(int sig) {
    (void)sig;
    nvtxr_mark(NULL, "from handler");
    handled++;
}
static void signal_marks(void) {
    /* The first call attaches the tool; calls a handler makes meanwhile, on
       the initializing thread, are dropped by design. */
    ranges("before signals", 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, NULL);
    while (handled < 100) ranges("under signals", 100);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handled %d\n", (int)handled);
}

/* Each of many threads gets a timer signal of its own every 20 us while it
   allocates, and the handler marks: a thread's first event is often a
   handler's, landing inside malloc. The tool must not allocate then (a
   thread-local reached through __tls_get_addr did, and the heap broke:
   a glibc abort or a hang). */
enum { STORM_THREADS = 64 };
enum { STORM_SIGNALS = 50 };
static _Atomic long storm_handled;
static _Thread_local volatile sig_atomic_t storm_mine;
static void storm_mark(int sig) {
    (void)sig;
    nvtxr_mark(NULL, "storm handler");
    storm_handled++;
    storm_mine++;
}
static void *storm_thread(void *arg) {
    (void)arg;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN;
    ev._sigev_un._tid = gettid();
    timer_t timer;
    timer_create(CLOCK_MONOTONIC, &ev, &timer);
    struct itimerspec every = {{0, 20000}, {0, 20000}};
    timer_settime(timer, 0, &every, NULL);
    for (size_t i = 0; storm_mine < STORM_SIGNALS; i++) free(malloc(16 + i % 4096));
    nvtxr_mark(NULL, "storm thread");
    timer_delete(timer);
    return NULL;
}
static void signal_storm(void) {
    nvtxr_mark(NULL, "attach"); /* the tool attaches on this thread first */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = storm_mark;
    sigaction(SIGRTMIN, &sa, NULL);
    alarm(60); /* a hang fails the test instead of blocking it */
    for (int i = 0; i < STORM_THREADS; i++) {
        pthread_t t;
        pthread_create(&t, NULL, storm_thread, NULL);
        pthread_join(t, NULL);
    }
    printf("handled %ld\n", (long)storm_handled);
}

/* Enough events for many full-size chunks, most made ahead by the tool's helper. */
static void long_run(void) {
    for (int i = 0; i < 3000000; i++) {
        nvtxr_range_push(NULL, "long");
        nvtxr_range_pop(NULL);
    }
}

/* More threads than file descriptors: each thread one range. */
enum { THREADS = 1100 };
static pthread_barrier_t all_recorded;
static void *one_range(void *arg) {
    (void)arg;
    ranges("thread", 1);
    pthread_barrier_wait(&all_recorded); /* every thread alive at once */
    return NULL;
}
static void many_threads(void) {
    struct rlimit fds = {1024, 1024};
    setrlimit(RLIMIT_NOFILE, &fds);
    enum { N = THREADS };
    pthread_barrier_init(&all_recorded, NULL, N);
    pthread_t t[N];
    for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, one_range, NULL);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
}

/* COUNT short threads, 8 at a time, each with one range and one mark, as
   per-request threads or std::async make them. */
static void *short_thread(void *arg) {
    (void)arg;
    ranges("request", 1);
    return NULL;
}
static void short_threads(int count) {
    for (int i = 0; i < count; i += 8) {
        pthread_t t[8];
        int n = count - i < 8 ? count - i : 8;
        for (int j = 0; j < n; j++) pthread_create(&t[j], NULL, short_thread, NULL);
        for (int j = 0; j < n; j++) pthread_join(t[j], NULL);
    }
}

/* Short threads, then a thread that goes on in a chunk one of them handed
   on, and SIGKILL while its range is open: nothing recorded is lost. */
static void *open_at_death(void *arg) {
    (void)arg;
    nvtxr_range_push(NULL, "open at death");
    pthread_barrier_wait(&all_recorded);
    pause();
    return NULL;
}
static void short_threads_then_kill(int count) {
    short_threads(count);
    pthread_barrier_init(&all_recorded, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, open_at_death, NULL);
    pthread_barrier_wait(&all_recorded);
    raise(SIGKILL);
}

/* Records past a file-size limit below a chunk's size: must not be killed by SIGXFSZ. */
static void file_limit(void) {
    struct rlimit size = {16 << 10, 16 << 10};
    setrlimit(RLIMIT_FSIZE, &size);
    ranges("over the limit", 100);
    printf("still alive\n");
}

/* exec() without fork(): the events before it stay. */
static void exec_self(const char *self) {
    ranges("before exec", 20);
    execl(self, self, "worker", (char *)NULL);
}

/* A child that outlives its parent and records after the parent is gone. */
static void orphan(void) {
    ranges("parent", 3);
    if (fork() == 0) {
        usleep(300 * 1000);
        ranges("orphan", 7);
        _exit(0);
    }
}

/* Marks from atexit handlers and global destructors. */
static void at_exit_mark(void) { nvtxr_mark(NULL, "from atexit"); }
__attribute__((destructor)) static void destructor_mark(void) {
    if (getenv("NVTXR_TEST_DESTRUCTOR")) nvtxr_mark(NULL, "from destructor");
}
static void at_exit(void) {
    setenv("NVTXR_TEST_DESTRUCTOR", "1", 1);
    atexit(at_exit_mark);
    ranges("main", 2);
}

/* A thread named through the OS only, and one named through both. */
static void *os_named(void *arg) {
    prctl(PR_SET_NAME, (unsigned long)"os-named", 0, 0, 0);
    if (arg) nvtxr_name_current_thread("nvtx-named");
    ranges(arg ? "both" : "os only", 1);
    return NULL;
}
static void thread_names(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, os_named, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, os_named, (void *)1);
    pthread_join(b, NULL);
}

/* Prints the recording directory's mode (the launcher must make it private). */
static void dir_mode(void) {
    struct stat st;
    const char *dir = getenv("NVTXR_RECORD_DIR");
    if (!dir || stat(dir, &st) != 0) {
        printf("no directory\n");
        return;
    }
    printf("mode %o\n", (unsigned)(st.st_mode & 0777));
    ranges("checked", 1);
}

/* Start/end ranges, the same ids in two processes. */
static void async_ids(void) {
    if (fork() == 0) {
        nvtxr_range_end(NULL, nvtxr_range_start(NULL, "child async"));
        _exit(0);
    }
    wait(NULL);
    nvtxr_range_end(NULL, nvtxr_range_start(NULL, "parent async"));
}

/* 1000 ranges, each with its own payload (its number) and one of 3 colors. */
static void payloads(void) {
    const uint32_t palette[3] = {0xFFFF0000, 0xFF00FF00, 0xFF0000FF};
    for (int i = 0; i < 1000; i++) {
        nvtxr_event_t e = NVTXR_EVENT_INIT;
        e.message = "with payload";
        e.color_type = NVTXR_COLOR_ARGB;
        e.color = palette[i % 3];
        e.payload_type = NVTXR_PAYLOAD_U64;
        e.payload.as_u64 = (uint64_t)i;
        nvtxr_range_push_ex(NULL, &e);
        nvtxr_range_pop(NULL);
    }
}

/* 5000 start/end ranges, 8 open at once (each ended by the next start in
   its slot), under 3 names; the last in slot 0 is never ended. */
static void overlapping(void) {
    uint64_t open[8] = {0};
    char name[32];
    for (int i = 0; i < 5000; i++) {
        if (open[i % 8]) nvtxr_range_end(NULL, open[i % 8]);
        snprintf(name, sizeof name, "async %d", i % 3);
        open[i % 8] = nvtxr_range_start(NULL, name);
    }
    for (int k = 1; k < 8; k++) nvtxr_range_end(NULL, open[k]);
}

/* Ranges on 4 threads until SIGTERM; the handler reports how many each
   completed, then the process dies by the signal. "ready" once each thread
   has completed over 1000 (however the machine schedules them). */
static volatile long completed[4];
static void report_and_die(int sig) {
    char line[128];
    int n = snprintf(line, sizeof line, "completed %ld %ld %ld %ld\n", completed[0], completed[1],
                     completed[2], completed[3]);
    write(1, line, (size_t)n);
    signal(sig, SIG_DFL);
    raise(sig);
}
static void *count_ranges(void *arg) {
    int t = (int)(intptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "counted %d", t);
    for (;;) {
        nvtxr_range_push(NULL, name);
        nvtxr_range_pop(NULL);
        completed[t]++;
    }
    return NULL;
}
static void until_sigterm(void) {
    signal(SIGTERM, report_and_die);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, count_ranges, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++)
        while (completed[i] <= 1000) usleep(1000);
    printf("ready\n");
    fflush(stdout);
    pause();
}

/* Ranges in hard colors (white, yellow, cyan, navy), and a child that
   attaches the tool but records nothing. */
static void colors(void) {
    const struct { const char *name; uint32_t argb; } bars[] = {
        {"white", 0xFFFFFFFF}, {"yellow", 0xFFFFFF00}, {"cyan", 0xFF00FFFF}, {"navy", 0xFF000080}};
    for (int i = 0; i < 4; i++) {
        nvtxr_event_t e = NVTXR_EVENT_INIT;
        e.message = bars[i].name;
        e.color_type = NVTXR_COLOR_ARGB;
        e.color = bars[i].argb;
        nvtxr_range_push_ex(NULL, &e);
        usleep(20 * 1000);
        nvtxr_range_pop(NULL);
    }
    /* Siblings with no color of their own, then more names than the legend shows. */
    static const char *siblings[] = {"compute", "barrier", "loss", "Loss", "prefetch done"};
    for (int i = 0; i < 5; i++) {
        nvtxr_range_push(NULL, siblings[i]);
        usleep(2 * 1000);
        nvtxr_range_pop(NULL);
    }
    for (int i = 1; i <= 45; i++) {
        char name[16];
        snprintf(name, sizeof name, "step %d", i);
        nvtxr_range_push(NULL, name);
        nvtxr_range_pop(NULL);
    }
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "record_scenarios", "quiet", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
}

/* Messages of 127 and 128 bytes (either side of the recording tool's fast
   path), 200 bytes, and 70000 (past the tool's 64 KiB cut), as marks, ranges
   and start/end ranges. */
static void texts(void) {
    static const size_t lengths[] = {127, 128, 200, 70000};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        char *m = malloc(lengths[i] + 1);
        for (size_t j = 0; j < lengths[i]; j++) m[j] = (char)('a' + j % 26);
        m[lengths[i]] = 0;
        nvtxr_mark(NULL, m);
        nvtxr_range_push(NULL, m);
        nvtxr_range_pop(NULL);
        nvtxr_range_end(NULL, nvtxr_range_start(NULL, m));
        free(m);
    }
}

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "processes")) processes(argv[0]);
    else if (!strcmp(s, "worker")) worker();
    else if (!strcmp(s, "sigterm")) sigterm();
    else if (!strcmp(s, "loop")) loop();
    else if (!strcmp(s, "thread_exit")) thread_exit();
    else if (!strcmp(s, "many")) many();
    else if (!strcmp(s, "bulk") && argc > 2) bulk(atoi(argv[2]));
    else if (!strncmp(s, "die-", 4)) die(s + 4);
    else if (!strcmp(s, "signal_marks")) signal_marks();
    else if (!strcmp(s, "signal_storm")) signal_storm();
    else if (!strcmp(s, "many_threads")) many_threads();
    else if (!strcmp(s, "short_threads") && argc > 2) short_threads(atoi(argv[2]));
    else if (!strcmp(s, "short_threads_then_kill") && argc > 2) short_threads_then_kill(atoi(argv[2]));
    else if (!strcmp(s, "long")) long_run();
    else if (!strcmp(s, "file_limit")) file_limit();
    else if (!strcmp(s, "exec_self")) exec_self(argv[0]);
    else if (!strcmp(s, "orphan")) orphan();
    else if (!strcmp(s, "at_exit")) at_exit();
    else if (!strcmp(s, "thread_names")) thread_names();
    else if (!strcmp(s, "dir_mode")) dir_mode();
    else if (!strcmp(s, "async_ids")) async_ids();
    else if (!strcmp(s, "overlapping")) overlapping();
    else if (!strcmp(s, "payloads")) payloads();
    else if (!strcmp(s, "until_sigterm")) until_sigterm();
    else if (!strcmp(s, "colors")) colors();
    else if (!strcmp(s, "texts")) texts();
    else if (!strcmp(s, "quiet")) nvtxr_initialize();
    else if (!strcmp(s, "thread_names_only")) nvtxr_name_current_thread("only a name");
    else {
        fprintf(stderr, "usage: %s SCENARIO (see main)\n", argv[0]);
        return 2;
    }
    return 0;
}
