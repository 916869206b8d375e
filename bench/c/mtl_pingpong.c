/*
 * mtl_pingpong: the MPI baseline of `gex-bench --tests tagged`.
 *
 * A blocking MPI_Send/MPI_Recv ping-pong between ranks 0 and 1, and a
 * windowed bandwidth test, for every size given. gex-bench builds it with
 * `mpicc -O2` and runs it with Open MPI's OFI MTL:
 *
 *   mpirun -n 2 --mca pml cm --mca mtl ofi \
 *          --mca mtl_ofi_provider_include tcp mtl_pingpong -s 8,1m
 *
 * Options (all optional):
 *   -s SIZES   comma-separated payload sizes in bytes, suffixes k and m
 *              (default: powers of two 8 .. 1m)
 *   -i ITERS   at most this many round trips / messages per size (10000)
 *   -f BYTES   bytes per size: a size's count is
 *              min(ITERS, max(16, BYTES / size)) (64m), as gex-bench's
 *              --iters and --flood-bytes
 *   -w WINDOW  messages in flight in the bandwidth test (64)
 *   -m BYTES   the receiver's window buffers at most this many bytes: the
 *              window is min(WINDOW, max(1, BYTES / size)) (64m)
 *
 * Output on rank 0's standard output, one line per figure:
 *
 *   lat <bytes> <one-way usec> <round trips>
 *   bw <bytes> <MB/s> <messages> <window>
 *   bw1 <bytes> <MB/s> <messages> <window>
 *
 * one-way = elapsed / round trips / 2 (as fi_pingpong's usec/xfer);
 * MB/s = 10^6 bytes per second, bytes = size x messages, elapsed from the
 * first MPI_Isend to the receiver's acknowledgement of the last window;
 * `bw`: a window's receives into disjoint buffers, `bw1`: all into one
 * buffer (the shape of OSU's osu_bw and fabtests' fi_rdm_tagged_bw).
 * Lines starting with `#` are comments. A warm-up of a tenth of the count
 * (at least 2, at most 1000) precedes every measurement.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 64
#define TAG_PING 1
#define TAG_BW 2
#define TAG_ACK 3

static long parse_size(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || v < 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	return *end ? -1 : v;
}

static int parse_sizes(char *list, long *sizes)
{
	int n = 0;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		long v = parse_size(t);
		if (v < 0 || n == MAX_SIZES)
			return -1;
		sizes[n++] = v;
	}
	return n;
}

static long count_for(long size, long iters, long per_size_bytes)
{
	long n = per_size_bytes / (size > 0 ? size : 1);
	if (n < 16)
		n = 16;
	return n < iters ? n : iters;
}

static long warmup_for(long n)
{
	long w = n / 10;
	return w < 2 ? 2 : w > 1000 ? 1000 : w;
}

/* `n` round trips of `size` bytes; returns the elapsed seconds on rank 0. */
static double pingpong(int rank, char *buf, long size, long n)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_CHAR, 1, TAG_PING, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_CHAR, 1, TAG_PING, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, (int)size, MPI_CHAR, 0, TAG_PING, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_CHAR, 0, TAG_PING, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

/*
 * `windows` windows of `window` messages of `size` bytes: rank 0 posts
 * `window` MPI_Isend from one buffer and waits for them; rank 1 has posted
 * `window` MPI_Irecv into disjoint parts of `rbuf` (all into its start if
 * `one`), waits for them and sends a 4-byte acknowledgement, which rank 0
 * receives before the next window. Returns the elapsed seconds on rank 0.
 */
static double windowed(int rank, char *sbuf, char *rbuf, long size, long window,
		       long windows, MPI_Request *reqs, int one)
{
	int ack = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long k = 0; k < windows; k++) {
		if (rank == 0) {
			for (long j = 0; j < window; j++)
				MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, TAG_BW,
					  MPI_COMM_WORLD, &reqs[j]);
			MPI_Waitall((int)window, reqs, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (long j = 0; j < window; j++)
				MPI_Irecv(rbuf + (one ? 0 : j * size), (int)size, MPI_CHAR, 0,
					  TAG_BW, MPI_COMM_WORLD, &reqs[j]);
			MPI_Waitall((int)window, reqs, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

static void usage(void)
{
	fprintf(stderr, "usage: mtl_pingpong [-s SIZES] [-i ITERS] [-f BYTES] "
			"[-w WINDOW] [-m BYTES]\n");
}

int main(int argc, char **argv)
{
	long sizes[MAX_SIZES], iters = 10000, per_size = 64L << 20;
	long max_window = 64, window_bytes = 64L << 20;
	int nsizes = 0, opt, rank, nranks;
	char *list = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "s:i:f:w:m:")) != -1) {
		long v = optarg ? parse_size(optarg) : -1;
		switch (opt) {
		case 's':
			list = optarg;
			break;
		case 'i':
			iters = v;
			break;
		case 'f':
			per_size = v;
			break;
		case 'w':
			max_window = v;
			break;
		case 'm':
			window_bytes = v;
			break;
		default:
			usage();
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (opt != 's' && v < 1) {
			if (rank == 0)
				fprintf(stderr, "mtl_pingpong: -%c %s: not a positive size\n",
					opt, optarg);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (list) {
		nsizes = parse_sizes(list, sizes);
	} else {
		for (long s = 8; s <= 1L << 20; s *= 2)
			sizes[nsizes++] = s;
	}
	if (nsizes <= 0 || nranks < 2 || optind != argc) {
		if (rank == 0) {
			if (nranks < 2)
				fprintf(stderr, "mtl_pingpong: needs 2 ranks\n");
			else
				usage();
		}
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	long largest = 0;
	for (int i = 0; i < nsizes; i++)
		largest = sizes[i] > largest ? sizes[i] : largest;
	long rbuf_len = 1;
	for (int i = 0; i < nsizes; i++) {
		long w = window_bytes / (sizes[i] ? sizes[i] : 1);
		w = w < 1 ? 1 : w > max_window ? max_window : w;
		if (w * sizes[i] > rbuf_len)
			rbuf_len = w * sizes[i];
	}
	char *sbuf = malloc(largest ? largest : 1);
	char *rbuf = malloc(rbuf_len);
	MPI_Request *reqs = malloc(max_window * sizeof *reqs);
	if (!sbuf || !rbuf || !reqs) {
		fprintf(stderr, "mtl_pingpong: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(sbuf, 0x5a, largest ? largest : 1);
	memset(rbuf, 0, rbuf_len);

	if (rank == 0) {
		char name[MPI_MAX_LIBRARY_VERSION_STRING];
		int len;
		MPI_Get_library_version(name, &len);
		name[strcspn(name, "\n,")] = 0;
		printf("# mtl_pingpong: %d ranks, %s\n", nranks, name);
		fflush(stdout);
	}
	for (int i = 0; i < nsizes; i++) {
		long size = sizes[i], n = count_for(size, iters, per_size);
		pingpong(rank, sbuf, size, warmup_for(n));
		double t = pingpong(rank, sbuf, size, n);
		if (rank == 0) {
			printf("lat %ld %.4f %ld\n", size, t * 1e6 / n / 2, n);
			fflush(stdout);
		}
	}
	for (int one = 0; one < 2; one++) {
		for (int i = 0; i < nsizes; i++) {
			long size = sizes[i], n = count_for(size, iters, per_size);
			long w = window_bytes / (size ? size : 1);
			w = w < 1 ? 1 : w > max_window ? max_window : w;
			long windows = (n + w - 1) / w;
			windowed(rank, sbuf, rbuf, size, w, (windows + 9) / 10, reqs, one);
			double t = windowed(rank, sbuf, rbuf, size, w, windows, reqs, one);
			if (rank == 0) {
				printf("%s %ld %.3f %ld %ld\n", one ? "bw1" : "bw", size,
				       (double)size * w * windows / t / 1e6, w * windows, w);
				fflush(stdout);
			}
		}
	}
	free(sbuf);
	free(rbuf);
	free(reqs);
	MPI_Finalize();
	return 0;
}
