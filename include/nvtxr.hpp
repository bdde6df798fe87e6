/*
 * nvtxr.hpp: C++ (C++17 and later) types over nvtxr.h, header-only.
 *
 *   struct my_lib { static constexpr const char *name = "my library"; };
 *
 *   void train() {
 *       NVTXR_FUNC_RANGE();                                   // "train", registered once
 *       nvtxr::scoped_range epoch{"epoch 1"};                 // popped at end of scope
 *       auto& d = nvtxr::domain::get<my_lib>();               // one domain per tag type
 *       nvtxr::unique_range load{nvtxr::event_attributes{"load"}.color(0xFF76B900), d};
 *       std::thread t{[r = std::move(load)]() mutable { r.end(); }};  // ends on another thread
 *       t.join();
 *   }
 *
 * Every function is noexcept: nvtxr's C functions never fail loudly, and a
 * refused call (bad input) is a no-op. Types follow NVIDIA's nvtx3.hpp.
 */
#ifndef NVTXR_HPP
#define NVTXR_HPP

#include <nvtxr.h>

#include <cstdint>
#include <utility>

namespace nvtxr {

class domain;
class registered_string;

/** Attributes of an event: message, color, category, payload. */
class event_attributes {
public:
    event_attributes() noexcept : event_(NVTXR_EVENT_INIT) {}
    /** A text message (UTF-8; read when the event is emitted). */
    explicit event_attributes(const char *message) noexcept : event_(NVTXR_EVENT_INIT) { event_.message = message; }
    /** A registered string as the message. */
    explicit event_attributes(const registered_string &message) noexcept;

    /** Color as 0xAARRGGBB. */
    event_attributes &color(std::uint32_t argb) noexcept {
        event_.color_type = NVTXR_COLOR_ARGB;
        event_.color = argb;
        return *this;
    }
    /** Category id (name it with domain::name_category). */
    event_attributes &category(std::uint32_t id) noexcept {
        event_.category = id;
        return *this;
    }
    event_attributes &payload(std::uint64_t v) noexcept { return set(NVTXR_PAYLOAD_U64, [&](nvtxr_payload_t &p) { p.as_u64 = v; }); }
    event_attributes &payload(std::int64_t v) noexcept { return set(NVTXR_PAYLOAD_I64, [&](nvtxr_payload_t &p) { p.as_i64 = v; }); }
    event_attributes &payload(double v) noexcept { return set(NVTXR_PAYLOAD_F64, [&](nvtxr_payload_t &p) { p.as_f64 = v; }); }
    event_attributes &payload(std::uint32_t v) noexcept { return set(NVTXR_PAYLOAD_U32, [&](nvtxr_payload_t &p) { p.as_u32 = v; }); }
    event_attributes &payload(std::int32_t v) noexcept { return set(NVTXR_PAYLOAD_I32, [&](nvtxr_payload_t &p) { p.as_i32 = v; }); }
    event_attributes &payload(float v) noexcept { return set(NVTXR_PAYLOAD_F32, [&](nvtxr_payload_t &p) { p.as_f32 = v; }); }

    const nvtxr_event_t *get() const noexcept { return &event_; }

private:
    template <typename F>
    event_attributes &set(std::uint32_t type, F write) noexcept {
        event_.payload_type = type;
        write(event_.payload);
        return *this;
    }
    nvtxr_event_t event_;
};

/** An NVTX domain. Owns one reference (released by the destructor); movable. */
class domain {
public:
    /** Creates (or shares) the domain `name`. */
    explicit domain(const char *name) noexcept : handle_{nvtxr_domain_create(name)} {}
    ~domain() { nvtxr_domain_destroy(handle_); }
    domain(const domain &) = delete;
    domain &operator=(const domain &) = delete;
    domain(domain &&other) noexcept : handle_{std::exchange(other.handle_, nullptr)} {}
    domain &operator=(domain &&other) noexcept {
        if (this != &other) {
            nvtxr_domain_destroy(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }

    /** The default domain. */
    static const domain &global() noexcept {
        static const domain d{nullptr, 0};
        return d;
    }

    /** The domain named `D::name`, created once (thread-safe) for the program's life. */
    template <typename D>
    static const domain &get() noexcept {
        static const domain d{D::name};
        return d;
    }

    nvtxr_domain_t *handle() const noexcept { return handle_; }

    void name_category(std::uint32_t id, const char *name) const noexcept { nvtxr_name_category(handle_, id, name); }
    void mark(const char *message) const noexcept { nvtxr_mark(handle_, message); }
    void mark(const event_attributes &attributes) const noexcept { nvtxr_mark_ex(handle_, attributes.get()); }

private:
    domain(std::nullptr_t, int) noexcept : handle_{nullptr} {}
    nvtxr_domain_t *handle_;
};

/** A string registered once in a domain; valid while the domain lives. Copyable. */
class registered_string {
public:
    registered_string(const domain &d, const char *text) noexcept
        : domain_{d.handle()}, handle_{nvtxr_string_register(d.handle(), text)} {}
    const nvtxr_string_t *handle() const noexcept { return handle_; }
    nvtxr_domain_t *domain_handle() const noexcept { return domain_; }

private:
    nvtxr_domain_t *domain_;
    const nvtxr_string_t *handle_;
};

inline event_attributes::event_attributes(const registered_string &message) noexcept : event_(NVTXR_EVENT_INIT) {
    event_.registered_message = message.handle();
}

/** A push/pop range for the current scope: popped by the destructor, on the
 *  thread that pushed it (neither copyable nor movable). */
class scoped_range {
public:
    explicit scoped_range(const char *message, const domain &d = domain::global()) noexcept
        : domain_{d.handle()}, active_{accepted(nvtxr_range_push(domain_, message))} {}
    explicit scoped_range(const event_attributes &attributes, const domain &d = domain::global()) noexcept
        : domain_{d.handle()}, active_{accepted(nvtxr_range_push_ex(domain_, attributes.get()))} {}
    /** Named by a registered string, in the string's domain. */
    explicit scoped_range(const registered_string &message) noexcept
        : domain_{message.domain_handle()}, active_{accepted(nvtxr_range_push_string(domain_, message.handle()))} {}
    ~scoped_range() {
        if (active_) nvtxr_range_pop(domain_);
    }
    scoped_range(const scoped_range &) = delete;
    scoped_range &operator=(const scoped_range &) = delete;
    scoped_range(scoped_range &&) = delete;
    scoped_range &operator=(scoped_range &&) = delete;

private:
    /** False when nvtxr refused the push (bad input): then there is nothing to pop. */
    static bool accepted(std::int32_t pushed) noexcept { return !NVTXR_IS_ERROR(pushed); }
    nvtxr_domain_t *domain_;
    bool active_;
};

/** A start/end range that any thread may end; ended by end() or the
 *  destructor, whichever comes first. Movable, not copyable. */
class unique_range {
public:
    explicit unique_range(const char *message, const domain &d = domain::global()) noexcept
        : domain_{d.handle()}, id_{nvtxr_range_start(domain_, message)} {}
    explicit unique_range(const event_attributes &attributes, const domain &d = domain::global()) noexcept
        : domain_{d.handle()}, id_{nvtxr_range_start_ex(domain_, attributes.get())} {}
    explicit unique_range(const registered_string &message) noexcept
        : domain_{message.domain_handle()}, id_{nvtxr_range_start_string(domain_, message.handle())} {}
    ~unique_range() { end(); }
    unique_range(const unique_range &) = delete;
    unique_range &operator=(const unique_range &) = delete;
    unique_range(unique_range &&other) noexcept : domain_{other.domain_}, id_{std::exchange(other.id_, 0)} {}
    unique_range &operator=(unique_range &&other) noexcept {
        if (this != &other) {
            end();
            domain_ = other.domain_;
            id_ = std::exchange(other.id_, 0);
        }
        return *this;
    }

    /** Ends the range now (once; later calls do nothing). */
    void end() noexcept {
        if (id_ != 0) nvtxr_range_end(domain_, std::exchange(id_, 0));
    }
    /** The tool's id (0 with no tool, or once ended). */
    std::uint64_t id() const noexcept { return id_; }

private:
    nvtxr_domain_t *domain_;
    std::uint64_t id_;
};

/** A mark in the default domain. */
inline void mark(const char *message) noexcept { nvtxr_mark(nullptr, message); }
inline void mark(const event_attributes &attributes) noexcept { nvtxr_mark_ex(nullptr, attributes.get()); }
inline void mark(const registered_string &message) noexcept {
    nvtxr_mark_string(message.domain_handle(), message.handle());
}

/** Names the calling OS thread. */
inline void name_current_thread(const char *name) noexcept { nvtxr_name_current_thread(name); }
/** Names a category of the default domain. */
inline void name_category(std::uint32_t id, const char *name) noexcept { nvtxr_name_category(nullptr, id, name); }

} // namespace nvtxr

#define NVTXR_CONCAT_CPP_(a, b) a##b
#define NVTXR_CONCAT_CPP(a, b) NVTXR_CONCAT_CPP_(a, b)

/** A range named after the enclosing function, in the domain of tag type D
 *  (see domain::get), its name registered once per call site. */
#define NVTXR_FUNC_RANGE_IN(D)                                                                 \
    static const ::nvtxr::registered_string NVTXR_CONCAT_CPP(nvtxr_func_string_, __LINE__){    \
        ::nvtxr::domain::get<D>(), __func__};                                                  \
    const ::nvtxr::scoped_range NVTXR_CONCAT_CPP(nvtxr_func_range_, __LINE__) {                \
        NVTXR_CONCAT_CPP(nvtxr_func_string_, __LINE__)                                         \
    }

/** A range named after the enclosing function, in the default domain. */
#define NVTXR_FUNC_RANGE()                                                                     \
    static const ::nvtxr::registered_string NVTXR_CONCAT_CPP(nvtxr_func_string_, __LINE__){    \
        ::nvtxr::domain::global(), __func__};                                                  \
    const ::nvtxr::scoped_range NVTXR_CONCAT_CPP(nvtxr_func_range_, __LINE__) {                \
        NVTXR_CONCAT_CPP(nvtxr_func_string_, __LINE__)                                         \
    }

#endif /* NVTXR_HPP */
