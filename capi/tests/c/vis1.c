/* GASNet-1's VIS (gasnet_putv_*, gasnet_puti_*, gasnet_puts_* and the
 * gets; gasnet_memvec_t) as a GASNet-1 program uses it, every rank with
 * its right neighbour, each in its _bulk, _nb_bulk and _nbi_bulk forms
 * with the syncs a GASNet-1 program uses: vector pieces that differ in
 * size on the two sides, indexed lists, a 3-D strided sub-block in
 * GASNet-1's convention (count[0] is the contiguous chunk in bytes,
 * stridelevels+1 counts), a strided call with stridelevels 0 (one
 * contiguous chunk) and the no-op cases (a zero count, zero pieces). The
 * data is checked byte for byte, and so are the bytes around every
 * remote piece. Prints one line per rank. */
#include <gasnet.h>
#include <gasnet_vis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gasnet_node_t me, n, peer;
static int errors;
#define FAIL(...) do { fprintf(stderr, "vis1.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

enum { SEGSZ = 1 << 20, AREA = 65536 };
static unsigned char pat(size_t i, unsigned salt) { return (unsigned char)(i * 29 + salt * 7 + 1); }

/* Sync what `form` started: 0 _nb_bulk (the handle), 1 _nbi_bulk, 2 _bulk. */
static void sync_form(int form, gasnet_handle_t h, int put) {
    if (form == 0) gasnet_wait_syncnb(h);
    else if (form == 1) {
        if (put) gasnet_wait_syncnbi_puts();
        else gasnet_wait_syncnbi_gets();
    }
}

/* The peer's area: zeroed, then `k` bytes from `want` at their offsets. */
static void clear(unsigned char *rarea) {
    static unsigned char zero[AREA];
    gasnet_put_bulk(peer, rarea, zero, AREA);
}
static void check_area(unsigned char *rarea, const unsigned char *want, const char *what, int form) {
    static unsigned char got[AREA];
    gasnet_get_bulk(got, peer, rarea, AREA);
    for (size_t i = 0; i < AREA; i++)
        if (got[i] != want[i]) { FAIL("%s (form %d): remote byte %zu is %u, want %u", what, form, i, got[i], want[i]); return; }
}

int main(int argc, char **argv) {
    if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
    if (gasnet_attach(NULL, 0, SEGSZ, 0) != GASNET_OK) return 1;
    me = gasnet_mynode(); n = gasnet_nodes(); peer = (me + 1) % n;
    gasnet_seginfo_t *segs = malloc(n * sizeof *segs);
    gasnet_getSegmentInfo(segs, (int)n);
    unsigned char *rarea = (unsigned char *)segs[peer].addr + 4096;
    static unsigned char want[AREA], back[AREA];

    for (int form = 0; form < 3; form++) {
        gasnet_handle_t h = GASNET_INVALID_HANDLE;
        /* Vector: pieces of 100, 3000 and 7 bytes (separate allocations)
         * into remote pieces of 2000 and 1107; read back into four local
         * pieces of other sizes. */
        clear(rarea);
        memset(want, 0, AREA);
        size_t pl[3] = {100, 3000, 7};
        unsigned char *p[3];
        gasnet_memvec_t src[3], dst[2] = {{rarea + 16, 2000}, {rarea + 40000, 1107}};
        size_t k = 0;
        for (int i = 0; i < 3; i++) {
            p[i] = malloc(pl[i]);
            for (size_t j = 0; j < pl[i]; j++, k++) {
                p[i][j] = pat(k, (unsigned)(form + me));
                want[k < 2000 ? 16 + k : 40000 + k - 2000] = p[i][j];
            }
            src[i].addr = p[i];
            src[i].len = pl[i];
        }
        if (form == 0) h = gasnet_putv_nb_bulk(peer, 2, dst, 3, src);
        else if (form == 1) gasnet_putv_nbi_bulk(peer, 2, dst, 3, src);
        else gasnet_putv_bulk(peer, 2, dst, 3, src);
        sync_form(form, h, 1);
        check_area(rarea, want, "putv", form);
        memset(back, 0xee, AREA);
        gasnet_memvec_t into[4] = {{back, 1}, {back + 100, 0}, {back + 200, 3000}, {back + 5000, 106}};
        if (form == 0) h = gasnet_getv_nb_bulk(4, into, peer, 2, dst);
        else if (form == 1) gasnet_getv_nbi_bulk(4, into, peer, 2, dst);
        else gasnet_getv_bulk(4, into, peer, 2, dst);
        sync_form(form, h, 0);
        for (size_t j = 0; j < 3107; j++) {
            unsigned char g = j < 1 ? back[j] : j < 3001 ? back[200 + j - 1] : back[5000 + j - 3001];
            if (g != pat(j, (unsigned)(form + me))) { FAIL("getv (form %d): byte %zu", form, j); break; }
        }
        if (back[1] != 0xee || back[100] != 0xee || back[3200] != 0xee || back[5106] != 0xee) FAIL("getv (form %d) wrote outside its pieces", form);
        for (int i = 0; i < 3; i++) free(p[i]);

        /* Indexed: 12 local chunks of 24 bytes into 9 remote chunks of 32,
         * remote chunks out of order. */
        clear(rarea);
        memset(want, 0, AREA);
        unsigned char *chunks = malloc(12 * 24);
        void *slist[12], *dlist[9];
        for (int i = 0; i < 12; i++) slist[i] = chunks + 24 * (11 - i);
        for (int i = 0; i < 9; i++) dlist[i] = rarea + 1000 + 97 * ((i * 5) % 9);
        for (size_t j = 0; j < 12 * 24; j++) {
            unsigned char v = pat(j, (unsigned)(form + 3 * me));
            ((unsigned char *)slist[j / 24])[j % 24] = v;
            want[(unsigned char *)dlist[j / 32] - rarea + j % 32] = v;
        }
        if (form == 0) h = gasnet_puti_nb_bulk(peer, 9, dlist, 32, 12, slist, 24);
        else if (form == 1) gasnet_puti_nbi_bulk(peer, 9, dlist, 32, 12, slist, 24);
        else gasnet_puti_bulk(peer, 9, dlist, 32, 12, slist, 24);
        sync_form(form, h, 1);
        check_area(rarea, want, "puti", form);
        unsigned char *again = malloc(6 * 48);
        void *glist[6];
        for (int i = 0; i < 6; i++) glist[i] = again + 48 * i;
        if (form == 0) h = gasnet_geti_nb_bulk(6, glist, 48, peer, 9, dlist, 32);
        else if (form == 1) gasnet_geti_nbi_bulk(6, glist, 48, peer, 9, dlist, 32);
        else gasnet_geti_bulk(6, glist, 48, peer, 9, dlist, 32);
        sync_form(form, h, 0);
        for (size_t j = 0; j < 12 * 24; j++)
            if (again[j] != pat(j, (unsigned)(form + 3 * me))) { FAIL("geti (form %d): byte %zu", form, j); break; }
        free(again);
        free(chunks);

        /* Strided, GASNet-1's convention: a 5 x 4 x 3 block of 8-byte
         * elements (count[0] = 40 bytes per row) from a local 7 x 6 x 3
         * array into a remote 9 x 5 x 4 array, then read back. */
        clear(rarea);
        memset(want, 0, AREA);
        enum { L0 = 7 * 8, L1 = 6 * L0, R0 = 9 * 8, R1 = 5 * R0 };
        unsigned char *local = calloc(3, L1);
        size_t ls[2] = {L0, L1}, rs[2] = {R0, R1}, count[3] = {40, 4, 3};
        for (size_t z = 0; z < 3; z++)
            for (size_t y = 0; y < 4; y++)
                for (size_t x = 0; x < 40; x++) {
                    unsigned char v = pat(x + 40 * (y + 4 * z), (unsigned)(form + 5 * me));
                    local[z * L1 + y * L0 + x + 8] = v;
                    want[2048 + z * R1 + y * R0 + x] = v;
                }
        if (form == 0) h = gasnet_puts_nb_bulk(peer, rarea + 2048, rs, local + 8, ls, count, 2);
        else if (form == 1) gasnet_puts_nbi_bulk(peer, rarea + 2048, rs, local + 8, ls, count, 2);
        else gasnet_puts_bulk(peer, rarea + 2048, rs, local + 8, ls, count, 2);
        sync_form(form, h, 1);
        check_area(rarea, want, "puts", form);
        unsigned char *dense = malloc(3 * 4 * 40 + 1);
        dense[3 * 4 * 40] = 0xee;
        size_t ds[2] = {40, 160};
        if (form == 0) h = gasnet_gets_nb_bulk(dense, ds, peer, rarea + 2048, rs, count, 2);
        else if (form == 1) gasnet_gets_nbi_bulk(dense, ds, peer, rarea + 2048, rs, count, 2);
        else gasnet_gets_bulk(dense, ds, peer, rarea + 2048, rs, count, 2);
        sync_form(form, h, 0);
        for (size_t j = 0; j < 3 * 4 * 40; j++)
            if (dense[j] != pat(j, (unsigned)(form + 5 * me))) { FAIL("gets (form %d): byte %zu", form, j); break; }
        if (dense[3 * 4 * 40] != 0xee) FAIL("gets (form %d) wrote past the block", form);
        free(dense);
        free(local);

        /* stridelevels 0: one contiguous chunk of count[0] bytes (the
         * stride arrays are not read: NULL is fine). */
        unsigned char one[77], got1[77];
        for (size_t j = 0; j < sizeof one; j++) one[j] = pat(j, (unsigned)(form + 11));
        size_t c0[1] = {sizeof one};
        if (form == 0) gasnet_wait_syncnb(gasnet_puts_nb_bulk(peer, rarea + 60000, NULL, one, NULL, c0, 0));
        else if (form == 1) { gasnet_puts_nbi_bulk(peer, rarea + 60000, NULL, one, NULL, c0, 0); gasnet_wait_syncnbi_all(); }
        else gasnet_puts_bulk(peer, rarea + 60000, NULL, one, NULL, c0, 0);
        gasnet_gets_bulk(got1, NULL, peer, rarea + 60000, NULL, c0, 0);
        if (memcmp(one, got1, sizeof one) != 0) FAIL("strided with stridelevels 0 (form %d)", form);

        /* No-ops: a zero count anywhere, zero pieces, a NULL address with
         * them. Nothing is written. */
        clear(rarea);
        memset(want, 0, AREA);
        size_t zc[3] = {40, 0, 3};
        gasnet_puts_bulk(peer, rarea, rs, one, ls, zc, 2);
        size_t z0[3] = {0, 4, 3};
        gasnet_puts_bulk(peer, NULL, rs, NULL, ls, z0, 2);
        gasnet_putv_bulk(peer, 0, NULL, 0, NULL);
        gasnet_puti_bulk(peer, 0, NULL, 8, 0, NULL, 8);
        check_area(rarea, want, "no-op forms", form);
    }

    if (errors == 0)
        printf("vis1.c: rank %u of %u: ok: GASNet-1 vector, indexed and strided transfers checked\n", (unsigned)me, (unsigned)n);
    fflush(stdout);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    free(segs);
    gasnet_exit(errors ? 1 : 0);
    return 0;
}
