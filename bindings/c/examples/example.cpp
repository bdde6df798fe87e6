// nvtxr.hpp: RAII ranges, a domain per tag type, registered strings, a range
// moved to and ended on another thread, and function ranges.
#include <nvtxr.hpp>

#include <cstdio>
#include <thread>

struct trainer_domain {
    static constexpr const char *name = "trainer";
};

static void forward() {
    NVTXR_FUNC_RANGE();
}

static void backward() {
    NVTXR_FUNC_RANGE_IN(trainer_domain);
}

int main() {
    nvtxr::name_current_thread("cpp main");
    const auto &d = nvtxr::domain::get<trainer_domain>();
    d.name_category(1, "compute");
    const nvtxr::registered_string step{d, "step"};
    {
        nvtxr::scoped_range epoch{"epoch"};
        for (int i = 0; i < 2; i++) {
            nvtxr::scoped_range s{step};
            forward();
            backward();
        }
        nvtxr::mark(nvtxr::event_attributes{"loss"}.payload(0.5).color(0xFF00FF00u).category(1));
    }
    nvtxr::unique_range load{nvtxr::event_attributes{"load"}.payload(std::uint64_t{7}), d};
    std::thread t{[r = std::move(load)]() mutable { r.end(); }};
    t.join();
    nvtxr::unique_range moved{"moved"};
    nvtxr::unique_range target = std::move(moved);
    target.end();
    target.end(); // a second end does nothing
    nvtxr::mark(step);
    std::printf("cpp example: done\n");
    return 0;
}
