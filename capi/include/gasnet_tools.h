/*
 * gasnet_tools.h: the GASNet tools subset of gasnet-ofi (timers, atomics,
 * portability macros, small utilities), written for this project from
 * GASNet's documented names and meanings. Usable without gasnetex.h.
 */
#ifndef GASNET_TOOLS_H
#define GASNET_TOOLS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The GASNet tools specification version followed (GASNet-EX.txt's). */
#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 17

/* ---- portability macros --------------------------------------------------- */
#ifdef __cplusplus
#define GASNETT_BEGIN_EXTERNC extern "C" {
#define GASNETT_EXTERNC extern "C"
#define GASNETT_END_EXTERNC }
#else
#define GASNETT_BEGIN_EXTERNC
#define GASNETT_EXTERNC extern
#define GASNETT_END_EXTERNC
#endif

#define GASNETT_INLINE(fnname) static inline
/* The attribute goes first, so the macro also wraps a definition. */
#define GASNETT_NEVER_INLINE(fnname, declarator) __attribute__((__noinline__)) declarator
#define GASNETT_NORETURN __attribute__((__noreturn__))
#define GASNETT_NORETURNP(fnname)
/* The attribute goes first, so the macro also wraps a definition. */
#define GASNETT_FORMAT_PRINTF(fnname, fmtarg, firstvararg, declarator) \
    __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define GASNETT_IDENT(identName, identText) \
    extern char volatile identName[];      \
    char volatile identName[] = identText
#define GASNETT_TRACE_PRINTF(...) ((void)0)
#define GASNETT_TRACE_SETSOURCELINE(file, line) ((void)0)
#define GASNET_BEGIN_FUNCTION() ((void)0)
/* GASNet-1's thread information: the SEQ library keeps none. */
typedef void *gasnet_threadinfo_t;
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)
#define GASNET_POST_THREADINFO(info) ((void)(info))
#define GASNETT_CURRENT_FUNCTION __func__

#define _STRINGIFY_HELPER(x) #x
#define _STRINGIFY(x) _STRINGIFY_HELPER(x)
#define _CONCAT_HELPER(a, b) a##b
#define _CONCAT(a, b) _CONCAT_HELPER(a, b)

#define GASNETT_PREDICT_TRUE(e) __builtin_expect(!!(e), 1)
#define GASNETT_PREDICT_FALSE(e) __builtin_expect(!!(e), 0)
#define if_pf(cond) if (GASNETT_PREDICT_FALSE(cond))
#define if_pt(cond) if (GASNETT_PREDICT_TRUE(cond))

/* ---- platform --------------------------------------------------------------- */
#define GASNETT_PAGESIZE 4096
/* The data cache line of the CPUs this header is built for. */
#if defined(__powerpc64__) || defined(__ppc64__)
#define GASNETT_CACHE_LINE_BYTES 128
#else
#define GASNETT_CACHE_LINE_BYTES 64
#endif
#define GASNETT_SYSTEM_TUPLE "x86_64-pc-linux-gnu"
#if defined(__clang__)
#define PLATFORM_COMPILER_FAMILYNAME CLANG
#elif defined(__GNUC__)
#define PLATFORM_COMPILER_FAMILYNAME GNU
#else
#define PLATFORM_COMPILER_FAMILYNAME UNKNOWN
#endif
#if defined(__VERSION__)
#define PLATFORM_COMPILER_VERSION_STR __VERSION__
#else
#define PLATFORM_COMPILER_VERSION_STR "unknown"
#endif

GASNETT_BEGIN_EXTERNC

/* ---- timers ------------------------------------------------------------------- */
typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
extern gasnett_tick_t gasnett_ticks_now(void);
extern uint64_t gasnett_ticks_to_ns(gasnett_tick_t ticks);
extern uint64_t gasnett_ticks_to_us(gasnett_tick_t ticks);
extern double gasnett_tick_granularityus(void);
extern double gasnett_tick_overheadus(void);

/* ---- memory barriers -------------------------------------------------------------
 * Each is a full fence (a sequentially consistent thread fence, which is
 * also a compiler barrier): stronger than GASNet requires of the write
 * and read barriers, so each meets its definition on every CPU. */
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- atomics (sequentially consistent; the flags are accepted and unused) -- */
typedef struct {
    volatile uint32_t gasnett_ctr;
} gasnett_atomic_t;
typedef uint32_t gasnett_atomic_val_t;
#define GASNETT_ATOMIC_NONE 0
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define gasnett_atomic_init(v) { (v) }
#define gasnett_atomic_read(p, flags) (__atomic_load_n(&(p)->gasnett_ctr, __ATOMIC_SEQ_CST))
#define gasnett_atomic_set(p, v, flags) (__atomic_store_n(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))
#define gasnett_atomic_increment(p, flags) ((void)__atomic_add_fetch(&(p)->gasnett_ctr, 1, __ATOMIC_SEQ_CST))
#define gasnett_atomic_decrement(p, flags) ((void)__atomic_sub_fetch(&(p)->gasnett_ctr, 1, __ATOMIC_SEQ_CST))
#define gasnett_atomic_add(p, v, flags) (__atomic_add_fetch(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))
typedef int32_t gasnett_atomic_sval_t;
#define gasnett_atomic_signed(v) ((gasnett_atomic_sval_t)(v))
#define GASNETT_HAVE_ATOMIC_ADD_SUB 1
#define GASNETT_HAVE_ATOMIC_CAS 1
#define gasnett_atomic_subtract(p, v, flags) (__atomic_sub_fetch(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))
#define gasnett_atomic_swap(p, v, flags) (__atomic_exchange_n(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))
#define gasnett_atomic_decrement_and_test(p, flags) (__atomic_sub_fetch(&(p)->gasnett_ctr, 1, __ATOMIC_SEQ_CST) == 0)
GASNETT_INLINE(gasnett_atomic_compare_and_swap)
int gasnett_atomic_compare_and_swap(gasnett_atomic_t *p, gasnett_atomic_val_t oldval,
                                    gasnett_atomic_val_t newval, int flags) {
    (void)flags;
    return __atomic_compare_exchange_n(&p->gasnett_ctr, &oldval, newval, 0, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

/* The fence flags, accepted by every atomic operation: each operation is
 * sequentially consistent, so every fence they ask for is already there. */
#define GASNETT_ATOMIC_RMB_PRE 0x01
#define GASNETT_ATOMIC_WMB_PRE 0x02
#define GASNETT_ATOMIC_MB_PRE 0x03
#define GASNETT_ATOMIC_RMB_POST 0x04
#define GASNETT_ATOMIC_WMB_POST 0x08
#define GASNETT_ATOMIC_MB_POST 0x0C
#define GASNETT_ATOMIC_RMB_POST_IF_TRUE 0x10
#define GASNETT_ATOMIC_RMB_POST_IF_FALSE 0x20
#define GASNETT_ATOMIC_REL GASNETT_ATOMIC_WMB_PRE
#define GASNETT_ATOMIC_ACQ GASNETT_ATOMIC_RMB_POST
#define GASNETT_ATOMIC_ACQ_IF_TRUE GASNETT_ATOMIC_RMB_POST_IF_TRUE
#define GASNETT_ATOMIC_ACQ_IF_FALSE GASNETT_ATOMIC_RMB_POST_IF_FALSE

/* Fixed-width atomics: exactly the storage (size and alignment) of
 * uint32_t and uint64_t, so an (int32_t *) or (double *) may be cast to
 * them, as GASNet allows. */
#define GASNETT_FIXED_ATOMIC(W)                                                                    \
    typedef struct {                                                                               \
        volatile uint##W##_t gasnett_ctr;                                                          \
    } gasnett_atomic##W##_t;                                                                       \
    GASNETT_INLINE(gasnett_atomic##W##_read)                                                       \
    uint##W##_t gasnett_atomic##W##_read(gasnett_atomic##W##_t *p, int flags) {                    \
        (void)flags;                                                                               \
        return __atomic_load_n(&p->gasnett_ctr, __ATOMIC_SEQ_CST);                                 \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_set)                                                        \
    void gasnett_atomic##W##_set(gasnett_atomic##W##_t *p, uint##W##_t v, int flags) {             \
        (void)flags;                                                                               \
        __atomic_store_n(&p->gasnett_ctr, v, __ATOMIC_SEQ_CST);                                    \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_compare_and_swap)                                           \
    int gasnett_atomic##W##_compare_and_swap(gasnett_atomic##W##_t *p, uint##W##_t oldval,         \
                                             uint##W##_t newval, int flags) {                      \
        (void)flags;                                                                               \
        return __atomic_compare_exchange_n(&p->gasnett_ctr, &oldval, newval, 0, __ATOMIC_SEQ_CST,  \
                                           __ATOMIC_SEQ_CST);                                      \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_swap)                                                       \
    uint##W##_t gasnett_atomic##W##_swap(gasnett_atomic##W##_t *p, uint##W##_t v, int flags) {     \
        (void)flags;                                                                               \
        return __atomic_exchange_n(&p->gasnett_ctr, v, __ATOMIC_SEQ_CST);                          \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_add)                                                        \
    uint##W##_t gasnett_atomic##W##_add(gasnett_atomic##W##_t *p, uint##W##_t v, int flags) {      \
        (void)flags;                                                                               \
        return __atomic_add_fetch(&p->gasnett_ctr, v, __ATOMIC_SEQ_CST);                           \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_subtract)                                                   \
    uint##W##_t gasnett_atomic##W##_subtract(gasnett_atomic##W##_t *p, uint##W##_t v, int flags) { \
        (void)flags;                                                                               \
        return __atomic_sub_fetch(&p->gasnett_ctr, v, __ATOMIC_SEQ_CST);                           \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_increment)                                                  \
    void gasnett_atomic##W##_increment(gasnett_atomic##W##_t *p, int flags) {                      \
        (void)flags;                                                                               \
        __atomic_add_fetch(&p->gasnett_ctr, 1, __ATOMIC_SEQ_CST);                                  \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_decrement)                                                  \
    void gasnett_atomic##W##_decrement(gasnett_atomic##W##_t *p, int flags) {                      \
        (void)flags;                                                                               \
        __atomic_sub_fetch(&p->gasnett_ctr, 1, __ATOMIC_SEQ_CST);                                  \
    }                                                                                              \
    GASNETT_INLINE(gasnett_atomic##W##_decrement_and_test)                                         \
    int gasnett_atomic##W##_decrement_and_test(gasnett_atomic##W##_t *p, int flags) {              \
        (void)flags;                                                                               \
        return __atomic_sub_fetch(&p->gasnett_ctr, 1, __ATOMIC_SEQ_CST) == 0;                      \
    }
GASNETT_FIXED_ATOMIC(32)
GASNETT_FIXED_ATOMIC(64)
#undef GASNETT_FIXED_ATOMIC
#define gasnett_atomic32_init(v) { (v) }
#define gasnett_atomic64_init(v) { (v) }

/* ---- mutexes, condition variables, reader/writer locks --------------------------
 * As GASNet's tools: with GASNETT_THREAD_SAFE or GASNETT_USE_TRUE_MUTEXES
 * defined before this header, pthread's mutexes and condition variables
 * (pthread.h is included then); otherwise, for a single-threaded program
 * (the SEQ library's), they do nothing: a lock always succeeds. */
#if defined(GASNETT_THREAD_SAFE) || defined(GASNETT_USE_TRUE_MUTEXES)
GASNETT_END_EXTERNC
#include <pthread.h>
GASNETT_BEGIN_EXTERNC
typedef pthread_mutex_t gasnett_mutex_t;
#define GASNETT_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define gasnett_mutex_init(pl) ((void)pthread_mutex_init((pl), NULL))
#define gasnett_mutex_destroy(pl) ((void)pthread_mutex_destroy(pl))
#define gasnett_mutex_destroy_ignoreerr(pl) pthread_mutex_destroy(pl)
#define gasnett_mutex_lock(pl) ((void)pthread_mutex_lock(pl))
#define gasnett_mutex_unlock(pl) ((void)pthread_mutex_unlock(pl))
/* 0 when taken, EBUSY when held elsewhere (pthread's). */
#define gasnett_mutex_trylock(pl) pthread_mutex_trylock(pl)
typedef pthread_cond_t gasnett_cond_t;
#define GASNETT_COND_INITIALIZER PTHREAD_COND_INITIALIZER
#define gasnett_cond_init(pc) ((void)pthread_cond_init((pc), NULL))
#define gasnett_cond_destroy(pc) ((void)pthread_cond_destroy(pc))
#define gasnett_cond_signal(pc) ((void)pthread_cond_signal(pc))
#define gasnett_cond_broadcast(pc) ((void)pthread_cond_broadcast(pc))
#define gasnett_cond_wait(pc, pl) ((void)pthread_cond_wait((pc), (pl)))
#else
typedef struct {
    char gasnett_unused;
} gasnett_mutex_t;
#define GASNETT_MUTEX_INITIALIZER { 0 }
#define gasnett_mutex_init(pl) ((void)(pl))
#define gasnett_mutex_destroy(pl) ((void)(pl))
#define gasnett_mutex_destroy_ignoreerr(pl) ((void)(pl), 0)
#define gasnett_mutex_lock(pl) ((void)(pl))
#define gasnett_mutex_unlock(pl) ((void)(pl))
#define gasnett_mutex_trylock(pl) ((void)(pl), 0)
typedef struct {
    char gasnett_unused;
} gasnett_cond_t;
#define GASNETT_COND_INITIALIZER { 0 }
#define gasnett_cond_init(pc) ((void)(pc))
#define gasnett_cond_destroy(pc) ((void)(pc))
#define gasnett_cond_signal(pc) ((void)(pc))
#define gasnett_cond_broadcast(pc) ((void)(pc))
#define gasnett_cond_wait(pc, pl) ((void)(pc), (void)(pl))
#endif
#define gasnett_mutex_assertlocked(pl) ((void)(pl))
#define gasnett_mutex_assertunlocked(pl) ((void)(pl))
/* Reader/writer locks as the mutexes above (full mutual exclusion, which
 * GASNet allows: pthread_rwlock_t is not declared in strict ISO C modes
 * such as -std=c99). */
typedef gasnett_mutex_t gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER GASNETT_MUTEX_INITIALIZER
#define gasnett_rwlock_init(pl) gasnett_mutex_init(pl)
#define gasnett_rwlock_destroy(pl) gasnett_mutex_destroy(pl)
#define gasnett_rwlock_rdlock(pl) gasnett_mutex_lock(pl)
#define gasnett_rwlock_wrlock(pl) gasnett_mutex_lock(pl)
#define gasnett_rwlock_unlock(pl) gasnett_mutex_unlock(pl)
#define gasnett_rwlock_tryrdlock(pl) gasnett_mutex_trylock(pl)
#define gasnett_rwlock_trywrlock(pl) gasnett_mutex_trylock(pl)
#define gasnett_rwlock_assertrdlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertwrlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertlocked(pl) ((void)(pl))
#define gasnett_rwlock_assertunlocked(pl) ((void)(pl))

/* ---- thread-specific data: one void * per thread (__thread; a variable at
 * namespace scope has the same symbol in C and C++) ------------------------------ */
#define GASNETT_THREADKEY_DECLARE(key) extern __thread void *gasnett_threadkey_##key
#define GASNETT_THREADKEY_DEFINE(key) __thread void *gasnett_threadkey_##key
#define gasnett_threadkey_init(key) ((void)0)
#define gasnett_threadkey_get(key) (gasnett_threadkey_##key)
#define gasnett_threadkey_set(key, val) ((void)(gasnett_threadkey_##key = (val)))
#define gasnett_threadkey_get_noinit(key) gasnett_threadkey_get(key)
#define gasnett_threadkey_set_noinit(key, val) gasnett_threadkey_set(key, val)

/* ---- zero bytes: in a buffer, in a copy of one, in a word ------------------------ */
GASNETT_INLINE(gasnett_count0s)
size_t gasnett_count0s(const void *src, size_t len) {
    const unsigned char *s = (const unsigned char *)src;
    size_t zeros = 0;
    for (size_t i = 0; i < len; i++) zeros += s[i] == 0;
    return zeros;
}
GASNETT_INLINE(gasnett_count0s_copy)
size_t gasnett_count0s_copy(void *dst, const void *src, size_t len) {
    memcpy(dst, src, len);
    return gasnett_count0s(src, len);
}
GASNETT_INLINE(gasnett_count0s_uint32_t)
int gasnett_count0s_uint32_t(uint32_t x) {
    return (int)gasnett_count0s(&x, sizeof x);
}
GASNETT_INLINE(gasnett_count0s_uint64_t)
int gasnett_count0s_uint64_t(uint64_t x) {
    return (int)gasnett_count0s(&x, sizeof x);
}

/* ---- utilities ------------------------------------------------------------------ */
extern uint64_t gasnett_checksum(const void *p, int numbytes);
extern int gasnett_cpu_count(void);
extern int gasnett_getenv_yesno_withdefault(const char *keyname, int defaultval);
extern const char *gasnett_gethostname(void);
extern void gasnett_nsleep(uint64_t ns_delay);
extern int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier);
extern int gasnett_sched_yield(void);
/* End this process at once with exitcode (output streams flushed), without
 * the job's exit protocol: the launcher ends the other ranks. */
GASNETT_NORETURN extern void gasnett_killmyprocess(int exitcode);
/* Print "*** FATAL ERROR: <message>" and abort this process. */
GASNETT_NORETURN extern void gasnett_fatalerror(const char *msg);
/* No backtrace support: returns non-zero (nothing printed). */
extern int gasnett_print_backtrace(int fd);
typedef void (*gasnett_sighandlerfn_t)(int);
/* Install fn for sig (signal(2)); the previous handler. */
extern gasnett_sighandlerfn_t gasnett_reghandler(int sigtocatch, gasnett_sighandlerfn_t fn);
extern int gasnett_verboseenv(void);
extern const char *gasnett_performance_warning_str(void);

/* ---- VIS metadata as text (GASNet's formatting tools) ---------------------------
 * Each writes at most its _bufsz bytes (NUL included) into buf; list is a
 * gasnet_memvec_t or gex_Memvec_t array; count[] of a strided transfer has
 * stridelevels+1 entries (GASNet-1's, the first in bytes). pstats is not
 * written (pass NULL). */
typedef struct {
    size_t minsz, maxsz;
    uintptr_t totalsz;
    void *minaddr, *maxaddr;
} gasnett_memveclist_stats_t;
typedef struct {
    void *minaddr, *maxaddr;
} gasnett_addrlist_stats_t;
extern size_t gasnett_format_memveclist_bufsz(size_t count);
extern gasnett_memveclist_stats_t gasnett_format_memveclist(char *buf, size_t count, const void *list);
extern size_t gasnett_format_addrlist_bufsz(size_t count);
extern gasnett_addrlist_stats_t gasnett_format_addrlist(char *buf, size_t count, void *const *list,
                                                        size_t len);
extern size_t gasnett_format_strides_bufsz(size_t count);
extern void gasnett_format_strides(char *buf, size_t count, const size_t *list);
extern size_t gasnett_format_putsgets_bufsz(size_t stridelevels);
extern size_t gasnett_format_putsgets(char *buf, void *pstats, uint32_t node, void *dstaddr,
                                      const size_t dststrides[], void *srcaddr,
                                      const size_t srcstrides[], const size_t count[],
                                      size_t stridelevels);

GASNETT_END_EXTERNC

#endif /* GASNET_TOOLS_H */
