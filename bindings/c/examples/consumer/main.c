/* A program outside nvtxr's source tree, built against an installed nvtxr
 * through pkg-config or CMake (see CMakeLists.txt). */
#include <nvtxr.h>
#include <nvtxr_scope.h>

#include <stdio.h>

int main(void) {
    NVTXR_FUNC_RANGE();
    nvtxr_mark(NULL, "consumer");
    printf("nvtxr %s\n", nvtxr_version_string());
    return 0;
}
