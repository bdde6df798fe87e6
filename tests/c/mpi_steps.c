/* An MPI job's steps, for `nvtxr record` under mpirun: each step is a
 * "compute" range whose length grows with the rank (rank N-1 is the
 * straggler) and a "barrier" range around MPI_Barrier, which every rank
 * leaves together: the event the ranks are aligned on. */
#include <mpi.h>
#include <nvtxr.h>

#include <time.h>

#define STEPS 5

static void work_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int step = 0; step < STEPS; step++) {
        nvtxr_range_push(NULL, "step");
        nvtxr_range_push(NULL, "compute");
        work_ms(5 * (rank + 1));
        nvtxr_range_pop(NULL);
        nvtxr_range_push(NULL, "barrier");
        MPI_Barrier(MPI_COMM_WORLD);
        nvtxr_range_pop(NULL);
        nvtxr_range_pop(NULL);
    }
    MPI_Finalize();
    return 0;
}
