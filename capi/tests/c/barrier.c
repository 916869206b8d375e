/* Barriers through the GASNet-EX C API: the legacy split-phase barrier
 * before and after the segment is attached, named and anonymous (and
 * mixed), a deliberate mismatch reported to every rank, gasnet_barrier_try
 * polled to completion, gasnet_barrier_result, gex_Coll_BarrierNB
 * completed through gex_Event_Test / gex_Event_Wait, and GASNet's rules
 * (its testbarrierconf.c) for a wait whose id or flags differ from its
 * notify's, through both wait and try. Prints one line. */
#include <gasnetex.h>
#include <stdio.h>

static gex_Rank_t me, n;
static int errors;
#define FAIL(...) do { fprintf(stderr, "barrier.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

static void expect(int got, int want, const char *what) {
    if (got != want) FAIL("%s returned %s, want %s", what, gasnet_ErrorName(got), gasnet_ErrorName(want));
}

/* The wait of a split barrier: gasnet_barrier_wait, or try polled. */
static int wait_or_try(int use_try, int id, int flags) {
    if (!use_try) return gasnet_barrier_wait(id, flags);
    int rc;
    while ((rc = gasnet_barrier_try(id, flags)) == GASNET_ERR_NOT_READY) gasnet_AMPoll();
    return rc;
}

/* barrier_result: 0 with `want` (named), or ANONYMOUS (want < 0). */
static void expect_result(long want, const char *what) {
    int id = -1, rc = gasnet_barrier_result(&id);
    if (want < 0 && rc != GASNET_BARRIERFLAG_ANONYMOUS) FAIL("%s: barrier_result %d (id %d), want anonymous", what, rc, id);
    if (want >= 0 && (rc != 0 || id != (int)want)) FAIL("%s: barrier_result %d id %d, want named %ld", what, rc, id, want);
}

/* GASNet's testbarrierconf.c rules (flags may differ between notify and
 * wait since GASNet 1.20): a named wait whose id differs from the id the
 * barrier agreed on returns GASNET_ERR_BARRIER_MISMATCH, not a fatal
 * error; an anonymous notify then a named wait, or a named notify then an
 * anonymous wait, is GASNET_OK. Returns the number of barriers run. */
static int notify_wait_rules(int use_try) {
    int count = 0;
    const char *how = use_try ? "try" : "wait";
    char what[160];
    /* Ids differ between notify and wait (every rank): a mismatch. */
    gasnet_barrier_notify(0, 0);
    snprintf(what, sizeof what, "notify(0) then %s(1)", how);
    expect(wait_or_try(use_try, 1, 0), GASNET_ERR_BARRIER_MISMATCH, what);
    count++;
    /* Anonymous notify, named wait, every rank: the barrier is anonymous. */
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    snprintf(what, sizeof what, "anonymous notify then named %s", how);
    expect(wait_or_try(use_try, 0, 0), GASNET_OK, what);
    expect_result(-1, what);
    count++;
    /* Named notify, anonymous wait: the result is the notify's name. */
    gasnet_barrier_notify(0, 0);
    snprintf(what, sizeof what, "named notify then anonymous %s", how);
    expect(wait_or_try(use_try, 0, GASNET_BARRIERFLAG_ANONYMOUS), GASNET_OK, what);
    expect_result(0, what);
    count++;
    /* Unnamed notify with named wait: as anonymous. */
    gasnet_barrier_notify(5, GASNET_BARRIERFLAG_UNNAMED);
    snprintf(what, sizeof what, "unnamed notify then named %s", how);
    expect(wait_or_try(use_try, 9, 0), GASNET_OK, what);
    count++;
    if (n > 1) {
        for (gex_Rank_t j = 0; j < n; j++) {
            /* Rank j notifies anonymously and waits with the others' name. */
            if (me == j) gasnet_barrier_notify(12345, GASNET_BARRIERFLAG_ANONYMOUS);
            else gasnet_barrier_notify(5551212, 0);
            snprintf(what, sizeof what, "rank %u anonymous notify, named %s(5551212)", (unsigned)j, how);
            expect(wait_or_try(use_try, 5551212, 0), GASNET_OK, what);
            expect_result(5551212, what);
            /* Rank j notifies anonymously and waits with another name: a
             * mismatch on rank j (elsewhere either result is allowed). */
            if (me == j) gasnet_barrier_notify(12345, GASNET_BARRIERFLAG_ANONYMOUS);
            else gasnet_barrier_notify(5551212, 0);
            int rc = wait_or_try(use_try, me == j ? 12345 : 5551212, 0);
            snprintf(what, sizeof what, "rank %u anonymous notify, mis-named %s(12345)", (unsigned)j, how);
            if (me == j) expect(rc, GASNET_ERR_BARRIER_MISMATCH, what);
            else if (rc != GASNET_OK && rc != GASNET_ERR_BARRIER_MISMATCH) FAIL("%s: %s elsewhere", what, gasnet_ErrorName(rc));
            /* Rank j named, the others anonymous: the barrier takes j's name. */
            if (me == j) gasnet_barrier_notify(0x7afef00d, 0);
            else gasnet_barrier_notify(911, GASNET_BARRIERFLAG_ANONYMOUS);
            snprintf(what, sizeof what, "rank %u named, others anonymous (%s)", (unsigned)j, how);
            expect(wait_or_try(use_try, me == j ? 0x7afef00d : 911, me == j ? 0 : GASNET_BARRIERFLAG_ANONYMOUS), GASNET_OK, what);
            expect_result(0x7afef00d, what);
            /* Rank j notifies a different id: a mismatch everywhere. */
            gasnet_barrier_notify(me == j, 0);
            snprintf(what, sizeof what, "rank %u notifies a different id (%s)", (unsigned)j, how);
            expect(wait_or_try(use_try, me == j, 0), GASNET_ERR_BARRIER_MISMATCH, what);
            count += 4;
        }
    }
    /* Still usable. */
    expect(gasnet_barrier(77, 0), GASNET_OK, "named barrier after the notify/wait rules");
    return count + 1;
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "BARRIERTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm); n = gex_TM_QuerySize(tm);
    int rounds = 0, id;

    /* Before attach: anonymous and named. */
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    expect(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS), GASNET_OK, "anonymous wait before attach");
    expect(gasnet_barrier(17, 0), GASNET_OK, "named barrier before attach");
    rounds += 2;
    if (gex_Segment_Attach(&segment, tm, 1 << 16) != GASNET_OK) return 1;

    for (int r = 0; r < 50; r++) {
        /* Named, same id everywhere: result reports it. */
        gasnet_barrier_notify(1000 + r, 0);
        expect(gasnet_barrier_wait(1000 + r, 0), GASNET_OK, "named wait");
        if (gasnet_barrier_result(&id) != 0 || id != 1000 + r) FAIL("barrier_result: id %d, want %d", id, 1000 + r);
        /* Mixed: rank 0 anonymous, the others named: no mismatch. */
        int fl = me == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0;
        gasnet_barrier_notify(7, fl);
        int rc;
        while ((rc = gasnet_barrier_try(7, fl)) == GASNET_ERR_NOT_READY) gasnet_AMPoll();
        expect(rc, GASNET_OK, "mixed named/anonymous try");
        if (n > 1 && (gasnet_barrier_result(&id) != 0 || id != 7)) FAIL("mixed barrier_result: id %d, want 7", id);
        /* All anonymous, unnamed flag. */
        expect(gasnet_barrier(0, GASNET_BARRIERFLAG_UNNAMED), GASNET_OK, "unnamed barrier");
        if (gasnet_barrier_result(&id) != GASNET_BARRIERFLAG_ANONYMOUS) FAIL("barrier_result after an anonymous barrier");
        /* New-style: NB event tested, then blocking. */
        gex_Event_t e = gex_Coll_BarrierNB(tm, 0);
        if (r % 2) gex_Event_Wait(e);
        else while (gex_Event_Test(e) != 0) gasnet_AMPoll();
        gex_Coll_BarrierBlocking(tm, 0);
        rounds += 5;
    }
    /* A mismatch: every rank names its own id; with two or more ranks all
     * see GASNET_ERR_BARRIER_MISMATCH. */
    gasnet_barrier_notify((int)me, 0);
    int mm = gasnet_barrier_wait((int)me, 0);
    expect(mm, n > 1 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK, "mismatched named wait");
    /* The barrier is usable afterwards. */
    expect(gasnet_barrier(3, 0), GASNET_OK, "named barrier after a mismatch");
    rounds += 2;
    /* One rank forces a mismatch (GASNET_BARRIERFLAG_MISMATCH, anonymous or
     * named), the others notify the same name: every rank's wait or try
     * reports it, and the next barrier is clean. */
    for (int r = 0; r < 2; r++) {
        int flags = me == n - 1 ? GASNET_BARRIERFLAG_MISMATCH | (r ? 0 : GASNET_BARRIERFLAG_ANONYMOUS) : 0;
        gasnet_barrier_notify(9, flags);
        int rc;
        if (r) while ((rc = gasnet_barrier_try(9, flags)) == GASNET_ERR_NOT_READY) gasnet_AMPoll();
        else rc = gasnet_barrier_wait(9, flags);
        expect(rc, GASNET_ERR_BARRIER_MISMATCH, r ? "forced mismatch (try)" : "forced mismatch (wait)");
        expect(gasnet_barrier(9, 0), GASNET_OK, "named barrier after a forced mismatch");
        rounds += 2;
    }
    /* A wait's id and flags against its notify's, with wait and with try. */
    for (int r = 0; r < 3; r++) rounds += notify_wait_rules(r % 2);
    if (errors == 0)
        printf("barrier.c: rank %u of %u: ok: %d barriers (legacy before and after attach, named, anonymous, mixed, try, result, gex NB and blocking, notify/wait id and flag rules, forced mismatches); mismatch reported as %s\n",
               (unsigned)me, (unsigned)n, rounds, gasnet_ErrorName(mm));
    fflush(stdout);
    int bad = errors;
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(bad ? 1 : 0);
    return 0;
}
