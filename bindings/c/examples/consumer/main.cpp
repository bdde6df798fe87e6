// The C++ side of the consumer project: nvtxr.hpp from the installed prefix.
#include <nvtxr.hpp>

#include <cstdio>

int main() {
    NVTXR_FUNC_RANGE();
    nvtxr::mark("consumer");
    std::printf("nvtxr %s\n", nvtxr_version_string());
    return 0;
}
