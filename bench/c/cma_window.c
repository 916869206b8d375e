/* The kernel copy the shm provider uses for large messages
 * (process_vm_readv, "CMA"), with no libfabric: a receiver process reads
 * SIZE bytes from its parent's buffer into slot i % WINDOW of one buffer of
 * WINDOW * SIZE bytes (the shape of gex-bench's windowed tagged bandwidth
 * test, whose receives of a window land in disjoint parts of one buffer),
 * COUNT times, after one warm-up pass over every slot. With --same, every
 * read lands in slot 0 (the shape of fi_pingpong and of fabtests'
 * windowed tests, whose receives share one buffer).
 *
 *   cma_window SIZE WINDOW COUNT [--same]
 *
 * Prints one line: "cma_window SIZE WINDOW COUNT same|disjoint MB/s".
 * Needs the same user for both processes and a ptrace scope that lets a
 * child read its parent (Debian's default). Built by
 * scripts/bench-tagged-window.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static long arg(const char *name, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0) {
        fprintf(stderr, "cma_window: %s must be a positive integer, not '%s'\n", name, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "--same") == 0)) {
        fprintf(stderr, "usage: cma_window SIZE WINDOW COUNT [--same]\n");
        return 2;
    }
    size_t size = (size_t)arg("SIZE", argv[1]);
    size_t window = (size_t)arg("WINDOW", argv[2]);
    long count = arg("COUNT", argv[3]);
    int same = argc == 5;
    char *src = malloc(size);
    if (!src) {
        perror("cma_window: malloc");
        return 1;
    }
    memset(src, 0x5a, size);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("cma_window: fork");
        return 1;
    }
    if (child == 0) {
        char *dst = calloc(window, size);
        if (!dst) {
            perror("cma_window: calloc");
            _exit(1);
        }
        double t0 = 0;
        for (long i = -(long)window; i < count; i++) {
            if (i == 0)
                t0 = now();
            size_t slot = same ? 0 : (size_t)((i + (long)window) % (long)window);
            struct iovec l = {dst + slot * size, size}, r = {src, size};
            if (process_vm_readv(parent, &l, 1, &r, 1, 0) != (ssize_t)size) {
                perror("cma_window: process_vm_readv");
                _exit(1);
            }
        }
        double t = now() - t0;
        printf("cma_window %zu %zu %ld %s %.1f\n", size, window, count,
               same ? "same" : "disjoint", (double)size * count / t / 1e6);
        fflush(stdout);
        _exit(0);
    }
    int st;
    if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st))
        return 1;
    return WEXITSTATUS(st);
}
