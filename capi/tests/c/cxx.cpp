// A small C++ program over the GASNet-EX C API: the headers compile as
// C++ (-Wall -Wextra -pedantic), and a ring of AM Medium requests carries
// a std::vector's bytes around every rank, then each rank gets its
// neighbour's segment with an NB get. Prints one line.
#include <gasnetex.h>
#include <gasnet_tools.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

// A thread key declared (as a header would) and defined here, with C
// linkage in C++ as in C.
GASNETT_THREADKEY_DECLARE(cxx_key);
GASNETT_THREADKEY_DEFINE(cxx_key);

namespace {

gex_TM_t tm;
gex_Rank_t me, n;
int hops = 0;
std::vector<int> received;

void on_ring(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t hop) {
    gex_Token_Info_t info;
    gex_Token_Info(t, &info, GEX_TI_SRCRANK);
    received.assign(static_cast<int *>(buf), static_cast<int *>(buf) + nbytes / sizeof(int));
    received.push_back(static_cast<int>(info.gex_srcrank));
    hops = hop;
}

}  // namespace

int main(int argc, char **argv) {
    gasnett_threadkey_set(cxx_key, &hops);
    gasnett_atomic64_t a64 = gasnett_atomic64_init(1);
    if (gasnett_threadkey_get(cxx_key) != &hops || gasnett_atomic64_add(&a64, 2, 0) != 3) return 1;
    gex_Client_t client;
    gex_EP_t ep;
    gex_Segment_t segment;
    if (gex_Client_Init(&client, &ep, &tm, "CXXTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm);
    n = gex_TM_QuerySize(tm);
    if (gex_Segment_Attach(&segment, tm, 1 << 16) != GASNET_OK) return 1;
    gex_AM_Entry_t entry[] = {{0, reinterpret_cast<gex_AM_Fn_t>(&on_ring),
                               GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 1, nullptr, "ring"}};
    if (gex_EP_RegisterHandlers(ep, entry, 1) != GASNET_OK) return 1;
    void *mine = nullptr;
    gex_EP_QueryBoundSegmentNB(tm, me, &mine, nullptr, nullptr, 0);
    std::vector<unsigned char> pattern(4096);
    std::iota(pattern.begin(), pattern.end(), static_cast<unsigned char>(me));
    std::memcpy(mine, pattern.data(), pattern.size());
    gex_Coll_BarrierBlocking(tm, 0);

    int errors = 0;
    gex_Rank_t next = (me + 1) % n;
    if (me == 0) {
        std::vector<int> start{0};
        gex_AM_RequestMedium1(tm, next, entry[0].gex_index, start.data(), start.size() * sizeof(int),
                              GEX_EVENT_NOW, 0, 1);
        GASNET_BLOCKUNTIL(hops == static_cast<int>(n));
        std::vector<int> want{0};
        for (gex_Rank_t r = 0; r < n; r++) want.push_back(static_cast<int>(r));
        if (received != want) errors++;
    } else {
        GASNET_BLOCKUNTIL(hops != 0);
        std::vector<int> path = received;
        gex_AM_RequestMedium1(tm, next, entry[0].gex_index, path.data(), path.size() * sizeof(int),
                              GEX_EVENT_NOW, 0, hops + 1);
    }
    void *theirs = nullptr;
    gex_EP_QueryBoundSegmentNB(tm, next, &theirs, nullptr, nullptr, 0);
    std::vector<unsigned char> got(4096);
    gex_Event_t e = gex_RMA_GetNB(tm, got.data(), next, theirs, got.size(), 0);
    gex_Event_Wait(e);
    std::vector<unsigned char> want(4096);
    std::iota(want.begin(), want.end(), static_cast<unsigned char>(next));
    if (got != want) errors++;
    if (errors == 0)
        std::printf("cxx.cpp: rank %u of %u: ok: ring of %u hops, neighbour's segment read\n",
                    static_cast<unsigned>(me), static_cast<unsigned>(n), static_cast<unsigned>(n));
    std::fflush(stdout);
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(errors ? 1 : 0);
}
