/* VIS through the GASNet-EX C API, every rank with its right neighbour:
 * vector puts and gets whose pieces differ in size on the two sides (local
 * pieces in separate allocations), indexed puts and gets, a 3-D strided
 * sub-block put and read back, a strided get that transposes a matrix
 * (negative and crossed strides), each in its NB, NBI and Blocking forms,
 * the data checked byte for byte; transfers to the rank itself and the
 * specification's no-op cases. Prints one line per rank. */
#include <gasnetex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_Rank_t me, n;
static int errors, checks;
#define FAIL(...) do { fprintf(stderr, "vis.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

static void sync_form(int form, gex_Event_t e) {
    if (form == 0) gex_Event_Wait(e);
    else if (form == 1) gex_NBI_Wait(GEX_EC_ALL, 0);
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "VISTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    enum { SEG = 1 << 20 };
    if (gex_Segment_Attach(&segment, tm, SEG) != GASNET_OK) return 1;
    gex_Rank_t peer = (me + 1) % n;
    char *rseg, *own;
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, peer, (void **)&rseg, NULL, NULL, 0));
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, me, (void **)&own, NULL, NULL, 0));

    for (int form = 0; form < 3; form++) {
        /* Vector: three local pieces of 100, 3000 and 7 bytes (separate
         * allocations) into two remote pieces of 2000 and 1107. */
        unsigned char *p[3] = {malloc(100), malloc(3000), malloc(7)};
        size_t pl[3] = {100, 3000, 7};
        unsigned char want[3107];
        size_t k = 0;
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < pl[i]; j++) want[k] = p[i][j] = (unsigned char)(k * 13 + form * 7 + me), k++;
        gex_Memvec_t src[3] = {{p[0], 100}, {p[1], 3000}, {p[2], 7}};
        gex_Memvec_t dst[2] = {{rseg + 4096, 2000}, {rseg + 65536, 1107}};
        gex_Event_t e = GEX_EVENT_INVALID;
        if (form == 0) {
            /* Local completion as a leaf: once it has happened the source
             * pieces may be reused before the put completes. */
            e = gex_VIS_VectorPutNB(tm, peer, 2, dst, 3, src, GEX_FLAG_ENABLE_LEAF_LC);
            gex_Event_t lc = gex_Event_QueryLeaf(e, GEX_EC_LC);
            gex_Event_Wait(lc);
            for (int i = 0; i < 3; i++) memset(p[i], 0xee, pl[i]);
        } else if (form == 1) gex_VIS_VectorPutNBI(tm, peer, 2, dst, 3, src, GEX_FLAG_ENABLE_LEAF_LC);
        else gex_VIS_VectorPutBlocking(tm, peer, 2, dst, 3, src, 0);
        sync_form(form, e);
        /* Read back in one piece per remote piece, into one buffer. */
        unsigned char back[3107];
        memset(back, 0, sizeof back);
        gex_Memvec_t into[1] = {{back, sizeof back}};
        if (form == 0) e = gex_VIS_VectorGetNB(tm, 1, into, peer, 2, dst, 0);
        else if (form == 1) gex_VIS_VectorGetNBI(tm, 1, into, peer, 2, dst, 0);
        else gex_VIS_VectorGetBlocking(tm, 1, into, peer, 2, dst, 0);
        sync_form(form, e);
        if (memcmp(back, want, sizeof want)) FAIL("vector put/get (form %d): data differ", form);
        checks++;
        for (int i = 0; i < 3; i++) free(p[i]);

        /* Indexed: 16 local pieces of 64 bytes (every other 64 of a
         * buffer) into 8 remote pieces of 128, spread out. */
        unsigned char ibuf[2048], iback[2048];
        void *lp[16], *rp[8], *bp[16];
        for (int i = 0; i < 2048; i++) ibuf[i] = (unsigned char)(i * 7 + form + me * 3);
        for (int i = 0; i < 16; i++) { lp[i] = ibuf + i * 128; bp[i] = iback + i * 128; }
        for (int i = 0; i < 8; i++) rp[i] = rseg + 131072 + i * 1000;
        if (form == 0) e = gex_VIS_IndexedPutNB(tm, peer, 8, rp, 128, 16, lp, 64, 0);
        else if (form == 1) gex_VIS_IndexedPutNBI(tm, peer, 8, rp, 128, 16, lp, 64, 0);
        else gex_VIS_IndexedPutBlocking(tm, peer, 8, rp, 128, 16, lp, 64, 0);
        sync_form(form, e);
        memset(iback, 0, sizeof iback);
        if (form == 0) e = gex_VIS_IndexedGetNB(tm, 16, bp, 64, peer, 8, rp, 128, 0);
        else if (form == 1) gex_VIS_IndexedGetNBI(tm, 16, bp, 64, peer, 8, rp, 128, 0);
        else gex_VIS_IndexedGetBlocking(tm, 16, bp, 64, peer, 8, rp, 128, 0);
        sync_form(form, e);
        for (int i = 0; i < 16; i++)
            if (memcmp(ibuf + i * 128, iback + i * 128, 64)) { FAIL("indexed put/get (form %d): piece %d differs", form, i); break; }
        checks++;

        /* Strided: a 5x6x7 sub-block of doubles from a local 8x9x10 array
         * (starting at [1][2][3]) into the peer's 6x7x8 array at [0][1][1];
         * then the peer's sub-block read back into a dense 5x6x7 block. */
        enum { LX = 10, LY = 9, LZ = 8, RX = 8, RY = 7, RZ = 6, BX = 7, BY = 6, BZ = 5 };
        static double local[LZ][LY][LX], block[BZ][BY][BX];
        double *remote = (double *)(rseg + 262144);
        for (int z = 0; z < LZ; z++) for (int y = 0; y < LY; y++) for (int x = 0; x < LX; x++)
            local[z][y][x] = z * 10000 + y * 100 + x + form * 0.5 + me * 1e6;
        ptrdiff_t lstr[2] = {LX * sizeof(double), LX * LY * sizeof(double)};
        ptrdiff_t rstr[2] = {RX * sizeof(double), RX * RY * sizeof(double)};
        ptrdiff_t bstr[2] = {BX * sizeof(double), BX * BY * sizeof(double)};
        size_t cnt[2] = {BY, BZ};
        double *lstart = &local[1][2][3], *rstart = remote + (0 * RY + 1) * RX + 1;
        if (form == 0) e = gex_VIS_StridedPutNB(tm, peer, rstart, rstr, lstart, lstr, BX * sizeof(double), cnt, 2, 0);
        else if (form == 1) gex_VIS_StridedPutNBI(tm, peer, rstart, rstr, lstart, lstr, BX * sizeof(double), cnt, 2, 0);
        else gex_VIS_StridedPutBlocking(tm, peer, rstart, rstr, lstart, lstr, BX * sizeof(double), cnt, 2, 0);
        sync_form(form, e);
        memset(block, 0, sizeof block);
        if (form == 0) e = gex_VIS_StridedGetNB(tm, block, bstr, peer, rstart, rstr, BX * sizeof(double), cnt, 2, 0);
        else if (form == 1) gex_VIS_StridedGetNBI(tm, block, bstr, peer, rstart, rstr, BX * sizeof(double), cnt, 2, 0);
        else gex_VIS_StridedGetBlocking(tm, block, bstr, peer, rstart, rstr, BX * sizeof(double), cnt, 2, 0);
        sync_form(form, e);
        for (int z = 0; z < BZ; z++) for (int y = 0; y < BY; y++) for (int x = 0; x < BX; x++)
            if (block[z][y][x] != local[z + 1][y + 2][x + 3]) { FAIL("strided 3-D block (form %d): [%d][%d][%d] differs", form, z, y, x); z = BZ; y = BY; break; }
        checks++;

        /* A transposing, reflecting get: element (i, j) of the remote 4x4
         * int matrix into (3 - j, i) locally: elemsz 4, local strides
         * {+16 (next row... i), -4 (j)}, remote strides {+4 (j), +16 (i)}. */
        int32_t *mat = (int32_t *)(rseg + 524288), t[4][4];
        int32_t m[16];
        for (int i = 0; i < 16; i++) m[i] = i * 3 + form + (int32_t)peer * 100;
        gex_RMA_PutBlocking(tm, peer, mat, m, sizeof m, 0);
        ptrdiff_t rs2[2] = {4, 16}, ls2[2] = {-4 * 4, 4};
        size_t c2[2] = {4, 4};
        memset(t, 0, sizeof t);
        /* levels: (elem j varies fastest via count[0]) */
        if (form == 0) e = gex_VIS_StridedGetNB(tm, &t[3][0], ls2, peer, mat, rs2, 4, c2, 2, 0);
        else if (form == 1) gex_VIS_StridedGetNBI(tm, &t[3][0], ls2, peer, mat, rs2, 4, c2, 2, 0);
        else gex_VIS_StridedGetBlocking(tm, &t[3][0], ls2, peer, mat, rs2, 4, c2, 2, 0);
        sync_form(form, e);
        for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++)
            if (t[3 - j][i] != m[i * 4 + j]) { FAIL("transposing get (form %d): (%d,%d) is %d, want %d", form, i, j, t[3 - j][i], m[i * 4 + j]); i = 4; break; }
        checks++;
        gex_Coll_BarrierBlocking(tm, 0);
    }
    /* To this rank itself, and the specification's no-op cases (elemsz 0
     * with every other argument ignored; a zero count). */
    {
        unsigned char a[300], b[300];
        for (int i = 0; i < 300; i++) a[i] = (unsigned char)(i ^ me);
        gex_Memvec_t src[2] = {{a, 100}, {a + 100, 200}}, dst[1] = {{own + 8192, 300}};
        gex_VIS_VectorPutBlocking(tm, me, 1, dst, 2, src, 0);
        gex_Memvec_t into[3] = {{b, 0}, {b, 150}, {b + 150, 150}};
        gex_VIS_VectorGetBlocking(tm, 3, into, me, 1, dst, 0);
        if (memcmp(a, b, 300) || memcmp(own + 8192, a, 300)) FAIL("vector transfers to this rank itself");
        gex_VIS_StridedPutBlocking(GEX_TM_INVALID, 12345, NULL, NULL, NULL, NULL, 0, NULL, 2, 0);
        ptrdiff_t st[1] = {8};
        size_t zero[1] = {0};
        gex_VIS_StridedGetBlocking(tm, NULL, st, n + 5, NULL, st, 8, zero, 1, 0);
        checks++;
    }
    (void)own;
    if (errors == 0)
        printf("vis.c: rank %u of %u: ok: %d vector, indexed, strided and transposing transfers checked\n", (unsigned)me, (unsigned)n, checks);
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
