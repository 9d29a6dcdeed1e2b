// Package ranksum is the summary that each rank of a job under
// libsigcheck writes at MPI_Finalize (rank-N.json in SIGCHECK_SUMMARY),
// and that sigcheck mpirun reads and merges: one definition for the
// library, the launcher and their tests, so that a field added on one side
// reaches the other.
package ranksum

// A Finding is one thing a rank found wrong.
type Finding struct {
	Kind      string   `json:"kind"` // "type mismatch", "corrupt message", "repaired message", "unrepaired message"
	Call      string   `json:"call"`
	Comm      string   `json:"comm"`
	Rank      int      `json:"rank"` // in Comm
	Peer      int      `json:"peer"` // the other side, in Comm
	WorldPeer int      `json:"world_peer"`
	Tag       int      `json:"tag"`     // -1 for collectives
	Element   int64    `json:"element"` // the first differing element, -1 when not known
	Detail    string   `json:"detail"`
	Lines     []string `json:"lines"` // as the rank printed them
}

// Summary is one rank's rank-N.json.
type Summary struct {
	Rank        int               `json:"rank"`
	Size        int               `json:"size"`
	Mode        string            `json:"mode"` // types, checksum or repair
	Checked     map[string]uint64 `json:"checked"`
	Sent        map[string]uint64 `json:"sent"`
	Unchecked   map[string]uint64 `json:"unchecked"` // "call: why"
	Mismatches  uint64            `json:"mismatches"`
	Corrupt     uint64            `json:"corrupt"`
	Injected    uint64            `json:"injected"`
	Repaired    uint64            `json:"repaired"`
	Unrepaired  uint64            `json:"unrepaired"`
	Findings    []Finding         `json:"findings"`
	Suppressed  int               `json:"suppressed"` // findings counted but not kept
	Undecoded   map[string]int    `json:"undecoded,omitempty"`
	Threads     string            `json:"threads"`
	Encryption  *Encryption       `json:"encryption,omitempty"`  // with SIGCHECK_ENCRYPT=1
	Replication *Replication      `json:"replication,omitempty"` // with SIGCHECK_REPLICATE=R
}

// Replication is what one process of a replicated job (one replica of
// one rank of the application) compared with the other replicas, as
// sigcheck redundancy counts it.
type Replication struct {
	Degree        int               `json:"degree"`   // replicas per rank
	Protocol      string            `json:"protocol"` // msgplushash or alltoall
	Replica       int               `json:"replica"`
	AppRank       int               `json:"app_rank"` // the rank it runs, in the application's MPI_COMM_WORLD
	AppSize       int               `json:"app_size"`
	Node          string            `json:"node"`          // where it ran, as its placement saw it
	Compared      uint64            `json:"compared"`      // received messages whose replicas' copies were compared
	Found         uint64            `json:"found"`         // of those, the ones whose copies disagreed
	Corrected     uint64            `json:"corrected"`     // this replica's copy replaced by the majority's before the receive returned
	Uncorrectable uint64            `json:"uncorrectable"` // disagreements without a majority (r = 2, or two replicas hit)
	Injected      uint64            `json:"injected"`      // send buffers the injector flipped a bit of
	ClaimsSent    uint64            `json:"claims_sent"`   // hashes (MsgPlusHash) or extra copies (All-to-all) sent
	CollCompared  uint64            `json:"coll_compared"` // collectives whose results the replicas voted on
	CollFound     uint64            `json:"coll_found"`
	CollCorrected uint64            `json:"coll_corrected"`
	Agreed        uint64            `json:"agreed"`    // answers replica 0 gave the others (Test, probes, Wtime, wildcards)
	Wildcards     uint64            `json:"wildcards"` // wildcard receives and probes resolved by replica 0
	NotCompared   map[string]uint64 `json:"not_compared"`
}

// Encryption is what a rank's encrypted all-gathers did, and what it sent
// between nodes in the clear.
type Encryption struct {
	Keys       string            `json:"keys"`       // how the job key was agreed
	Nodes      int               `json:"nodes"`      // MPI_COMM_WORLD's, as the library sees them
	Simulated  bool              `json:"simulated"`  // SIGCHECK_NODES split them
	Algorithm  string            `json:"algorithm"`  // the setting: auto, or the one named
	Allgathers map[string]uint64 `json:"allgathers"` // encrypted MPI_Allgather calls, by the algorithm that ran
	Packed     uint64            `json:"packed"`     // of those, the calls whose datatypes were packed and unpacked
	Sealed     uint64            `json:"sealed"`     // AES-GCM seals, and their plaintext bytes
	SealedB    uint64            `json:"sealed_bytes"`
	Opened     uint64            `json:"opened"` // AES-GCM opens, and their plaintext bytes
	OpenedB    uint64            `json:"opened_bytes"`
	Tampered   uint64            `json:"tampered"` // ciphertexts that failed authentication
	OneNode    uint64            `json:"one_node"` // MPI_Allgather calls within one node: nothing crossed
	// AutoSizes: by the algorithm Auto ran, the smallest and largest
	// block (bytes a rank) it ran it for.
	AutoSizes map[string][2]int64 `json:"auto_sizes,omitempty"`
	Clear     map[string]uint64   `json:"clear"` // calls between nodes sent in the clear, "call: why"
}
