/* The GASNet tools that need no client (gasnet_tools.h alone), checked by
 * what GASNet's README-tools says they return: the atomics' add and
 * subtract (the new value), swap (the old one), compare-and-swap and
 * decrement-and-test (non-zero on success / on reaching zero), wrapping
 * at the type's width, and the 32- and 64-bit fixed-width atomics (their
 * storage exactly uint32_t's and uint64_t's); four threads adding to one
 * counter of each kind; a mutex's trylock (EBUSY while held; the
 * program asks for GASNETT_USE_TRUE_MUTEXES, as GASNet's tools let), a
 * reader/writer lock; a thread key that holds one value per thread; and
 * the zero-byte counts. Prints "tools.c: ok: ..." and exits 0. */
/* Real mutexes: this program has threads (the SEQ default is no-ops). */
#define GASNETT_USE_TRUE_MUTEXES 1
#include <gasnet_tools.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int errors;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "tools.c:%d: %s\n", __LINE__, #c); errors++; } } while (0)

enum { THREADS = 4, ADDS = 100000 };
static gasnett_atomic_t a = gasnett_atomic_init(0);
static gasnett_atomic32_t a32 = gasnett_atomic32_init(0);
static gasnett_atomic64_t a64 = gasnett_atomic64_init(0);
static gasnett_mutex_t lock = GASNETT_MUTEX_INITIALIZER;
static long plain;
GASNETT_THREADKEY_DEFINE(mine);

static void *adder(void *arg) {
    gasnett_threadkey_set(mine, arg);
    for (int i = 0; i < ADDS; i++) {
        gasnett_atomic_increment(&a, GASNETT_ATOMIC_REL);
        gasnett_atomic32_add(&a32, 2, 0);
        gasnett_atomic64_add(&a64, (uint64_t)1 << 33, GASNETT_ATOMIC_ACQ);
        gasnett_mutex_lock(&lock);
        plain++;
        gasnett_mutex_unlock(&lock);
    }
    /* Each thread still sees its own key. */
    return gasnett_threadkey_get(mine) == arg ? arg : NULL;
}

int main(void) {
    CHECK(sizeof(gasnett_atomic32_t) == 4 && sizeof(gasnett_atomic64_t) == 8);
    CHECK(__alignof__(gasnett_atomic64_t) == __alignof__(uint64_t));
    /* gasnett_atomic_t */
    gasnett_atomic_set(&a, 5, 0);
    CHECK(gasnett_atomic_add(&a, 3, 0) == 8);
    CHECK(gasnett_atomic_subtract(&a, 10, 0) == GASNETT_ATOMIC_MAX - 1);
    CHECK(gasnett_atomic_signed(gasnett_atomic_read(&a, 0)) == -2);
    CHECK(gasnett_atomic_swap(&a, 1, GASNETT_ATOMIC_ACQ) == GASNETT_ATOMIC_MAX - 1);
    CHECK(!gasnett_atomic_compare_and_swap(&a, 7, 9, 0) && gasnett_atomic_read(&a, 0) == 1);
    CHECK(gasnett_atomic_compare_and_swap(&a, 1, 2, GASNETT_ATOMIC_ACQ_IF_TRUE) && gasnett_atomic_read(&a, 0) == 2);
    CHECK(!gasnett_atomic_decrement_and_test(&a, 0));
    CHECK(gasnett_atomic_decrement_and_test(&a, GASNETT_ATOMIC_ACQ_IF_TRUE));
    /* Fixed width */
    gasnett_atomic32_set(&a32, 0xFFFFFFFFu, 0);
    CHECK(gasnett_atomic32_add(&a32, 2, 0) == 1);
    CHECK(gasnett_atomic32_swap(&a32, 10, 0) == 1);
    CHECK(gasnett_atomic32_subtract(&a32, 4, 0) == 6);
    CHECK(!gasnett_atomic32_compare_and_swap(&a32, 5, 0, 0));
    CHECK(gasnett_atomic32_compare_and_swap(&a32, 6, 1, 0));
    CHECK(gasnett_atomic32_decrement_and_test(&a32, 0) && gasnett_atomic32_read(&a32, 0) == 0);
    gasnett_atomic64_set(&a64, (uint64_t)1 << 40, 0);
    CHECK(gasnett_atomic64_add(&a64, 1, 0) == ((uint64_t)1 << 40) + 1);
    gasnett_atomic64_decrement(&a64, 0);
    gasnett_atomic64_increment(&a64, 0);
    gasnett_atomic64_decrement(&a64, 0);
    CHECK(gasnett_atomic64_swap(&a64, 3, 0) == (uint64_t)1 << 40);
    CHECK(gasnett_atomic64_compare_and_swap(&a64, 3, UINT64_MAX, 0) && gasnett_atomic64_read(&a64, 0) == UINT64_MAX);
    CHECK(gasnett_atomic64_subtract(&a64, UINT64_MAX, 0) == 0);
    double d = 1.5; /* a double's storage, as GASNet allows */
    uint64_t bits;
    memcpy(&bits, &d, 8);
    CHECK(gasnett_atomic64_read((gasnett_atomic64_t *)(void *)&d, 0) == bits);
    /* Threads */
    gasnett_atomic_set(&a, 0, 0);
    gasnett_atomic32_set(&a32, 0, 0);
    gasnett_atomic64_set(&a64, 0, 0);
    gasnett_threadkey_init(mine);
    gasnett_threadkey_set(mine, &errors);
    pthread_t t[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, adder, &ids[i]);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        CHECK(r == &ids[i]);
    }
    CHECK(gasnett_atomic_read(&a, 0) == THREADS * ADDS);
    CHECK(gasnett_atomic32_read(&a32, 0) == 2u * THREADS * ADDS);
    CHECK(gasnett_atomic64_read(&a64, 0) == ((uint64_t)THREADS * ADDS) << 33);
    CHECK(plain == (long)THREADS * ADDS);
    CHECK(gasnett_threadkey_get_noinit(mine) == &errors);
    /* Locks */
    gasnett_mutex_lock(&lock);
    CHECK(gasnett_mutex_trylock(&lock) == EBUSY);
    gasnett_mutex_unlock(&lock);
    CHECK(gasnett_mutex_trylock(&lock) == 0);
    gasnett_mutex_unlock(&lock);
    gasnett_rwlock_t rw = GASNETT_RWLOCK_INITIALIZER;
    gasnett_rwlock_rdlock(&rw);
    CHECK(gasnett_rwlock_trywrlock(&rw) != 0);
    gasnett_rwlock_unlock(&rw);
    CHECK(gasnett_rwlock_trywrlock(&rw) == 0);
    gasnett_rwlock_unlock(&rw);
    gasnett_rwlock_destroy(&rw);
    /* Zero bytes */
    unsigned char buf[1000], copy[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (unsigned char)(i % 7 == 0 ? 0 : i % 251 + 1);
    CHECK(gasnett_count0s(buf, 1000) == 143);
    CHECK(gasnett_count0s_copy(copy, buf + 1, 999) == 142 && memcmp(copy, buf + 1, 999) == 0);
    CHECK(gasnett_count0s_uint32_t(0x00ff0001u) == 2);
    CHECK(gasnett_count0s_uint64_t(0) == 8 && gasnett_count0s_uint64_t(UINT64_MAX) == 0);
    if (errors) return 1;
    printf("tools.c: ok: atomics, fixed-width atomics (%d threads x %d adds), locks, thread keys, zero counts\n", THREADS, ADDS);
    return 0;
}
