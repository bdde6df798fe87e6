/* Workloads for `nvtxr record` tests: `record_scenarios NAME`. */
#include <nvtxr.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "processes")) processes(argv[0]);
    else if (!strcmp(s, "worker")) worker();
    else if (!strcmp(s, "sigterm")) sigterm();
    else if (!strcmp(s, "loop")) loop();
    else if (!strcmp(s, "thread_exit")) thread_exit();
    else if (!strcmp(s, "many")) many();
    else {
        fprintf(stderr, "usage: %s processes|sigterm|loop|thread_exit|many\n", argv[0]);
        return 2;
    }
    return 0;
}
