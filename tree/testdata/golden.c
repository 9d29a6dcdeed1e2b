/*
 * golden.c: the roots in golden_roots.txt, computed independently of the Go
 * code with the xxHash C library, by the layout and hashing of the paper's
 * reference implementation (merkle-mpi, src/merkle.c): n = ceil(size/seg)
 * leaves, 2n-1 nodes in level order, children of node i at 2i+1 and 2i+2,
 * leaf of segment j at node j+n-1, the last segment shorter; a leaf is
 * XXH3_64bits_withSeed(segment, node index), an inner node
 * XXH3_64bits_withSeed({left hash, right hash} as two uint64s, 16 bytes,
 * node index).
 *
 * Regenerate (Debian: apt-get install libxxhash-dev):
 *   cc -O2 -o /tmp/golden tree/testdata/golden.c -lxxhash
 *   /tmp/golden > tree/testdata/golden_roots.txt
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

/* The test data: byte k is the top byte of the 32-bit product k * 2654435761. */
static unsigned char byte_at(uint64_t k) { return (unsigned char)(((uint32_t)k * 2654435761u) >> 24); }

static uint64_t root(const unsigned char *data, uint64_t size, uint64_t seg) {
	uint64_t n = (size + seg - 1) / seg, nodes = 2 * n - 1;
	uint64_t *h = malloc(nodes * sizeof *h);
	for (uint64_t i = nodes; i-- > 0;) {
		if (2 * i + 1 >= nodes) {
			uint64_t j = i - (n - 1);
			uint64_t len = (j == n - 1 && size % seg != 0) ? size % seg : seg;
			h[i] = XXH3_64bits_withSeed(data + j * seg, len, i);
		} else {
			uint64_t pair[2] = {h[2 * i + 1], h[2 * i + 2]};
			h[i] = XXH3_64bits_withSeed(pair, sizeof pair, i);
		}
	}
	uint64_t r = h[0];
	free(h);
	return r;
}

int main(void) {
	static const uint64_t sizes[] = {1, 100, 2047, 2048, 2049, 4096, 6144, 10000, 65536, 1000003, 4194304};
	static const uint64_t segs[] = {64, 1000, 2048, 4096};
	uint64_t max = 4194304;
	unsigned char *data = malloc(max);
	for (uint64_t k = 0; k < max; k++) data[k] = byte_at(k);
	printf("# size segment root (XXH3-64 Merkle root, reference layout; see golden.c)\n");
	for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
		for (size_t b = 0; b < sizeof segs / sizeof *segs; b++)
			printf("%llu %llu %016llx\n", (unsigned long long)sizes[a], (unsigned long long)segs[b],
			       (unsigned long long)root(data, sizes[a], segs[b]));
	free(data);
	return 0;
}
