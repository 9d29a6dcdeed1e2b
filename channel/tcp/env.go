package tcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvRank   = "SIGCHECK_RANK"
	EnvSize   = "SIGCHECK_SIZE"
	EnvRoot   = "SIGCHECK_ROOT"
	EnvSecret = "SIGCHECK_SECRET"
	// EnvCongestion sets Config.Congestion.
	EnvCongestion = "SIGCHECK_TCP_CC"
	// EnvAuth sets Config.Auth: auto, on or off (ParseAuth).
	EnvAuth = "SIGCHECK_TCP_AUTH"
)

// What Open MPI's mpirun (4.x, ORTE) puts in the environment of every
// rank of a job: the job's id, the session directory its ranks on one
// node share (made by mpirun, the user's only), the number of nodes, and
// a random key per job that mpirun makes for transports to recognize the
// job's processes by (PSM's job key).
const (
	envOMPIJob        = "OMPI_MCA_ess_base_jobid"
	envOMPISessionDir = "OMPI_MCA_orte_jobfam_session_dir"
	envOMPINodes      = "OMPI_MCA_orte_num_nodes"
	envOMPIJobKey     = "OMPI_MCA_orte_precondition_transports"
)

// ErrJobFile: the file by which rank 0 of an mpirun job tells the others
// where it listens is not what rank 0 writes.
var ErrJobFile = errors.New("tcp: malformed job file")

// ConfigFromEnv reads the configuration from the environment: rank and
// size from SIGCHECK_RANK and SIGCHECK_SIZE, or else from what mpirun
// sets (OMPI_COMM_WORLD_RANK/SIZE for Open MPI, PMI_RANK/PMI_SIZE for
// MPICH and Intel MPI), so that an MPI launcher can start the ranks; the
// root address from SIGCHECK_ROOT, the secret from SIGCHECK_SECRET, the
// links' congestion control, if any, from SIGCHECK_TCP_CC, and which
// links are authenticated frame by frame from SIGCHECK_TCP_AUTH (auto,
// the default; on; off).
//
// Under Open MPI's mpirun on one node, neither needs setting: rank 0
// listens on a port of the loopback interface and writes its address to
// a file in the job's session directory, where the other ranks read it
// (waiting up to a minute for it to appear: ConfigFromEnvContext takes
// a context instead), and the secret is mpirun's random key for the job
// (OMPI_MCA_orte_precondition_transports), which only the job's
// processes are given. A link is then authenticated against anyone who
// does not know that key: processes of other users, and of other jobs of
// this user, are refused; a process of this user that reads a rank's
// environment (/proc/PID/environ) is not, as it could also attach a
// debugger to the rank. On several nodes the session directory is not
// shared: set SIGCHECK_ROOT to rank 0's host:port (the key still comes
// from mpirun).
func ConfigFromEnv() (Config, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return ConfigFromEnvContext(ctx)
}

// ConfigFromEnvContext is ConfigFromEnv, waiting for rank 0's job
// file (under mpirun with no SIGCHECK_ROOT) until ctx is done.
func ConfigFromEnvContext(ctx context.Context) (Config, error) {
	var cfg Config
	pick := func(what string, names ...string) (int, error) {
		for _, n := range names {
			if v, ok := os.LookupEnv(n); ok {
				i, err := strconv.Atoi(v)
				if err != nil {
					return 0, fmt.Errorf("tcp: %s=%q: not a number", n, v)
				}
				return i, nil
			}
		}
		return 0, fmt.Errorf("tcp: no %s in the environment (set %s)", what, names[0])
	}
	var err error
	if cfg.Rank, err = pick("rank", EnvRank, "OMPI_COMM_WORLD_RANK", "PMI_RANK"); err != nil {
		return cfg, err
	}
	if cfg.Size, err = pick("size", EnvSize, "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"); err != nil {
		return cfg, err
	}
	cfg.Root = os.Getenv(EnvRoot)
	cfg.Congestion = os.Getenv(EnvCongestion)
	if cfg.Auth, err = ParseAuth(os.Getenv(EnvAuth)); err != nil {
		return cfg, fmt.Errorf("%s: %w", EnvAuth, err)
	}
	cfg.Secret = []byte(os.Getenv(EnvSecret))
	if len(cfg.Secret) == 0 {
		if key := os.Getenv(envOMPIJobKey); key != "" {
			cfg.Secret = []byte("sigcheck over mpirun, job key " + key)
		}
	}
	if cfg.Size > 1 && cfg.Root == "" && os.Getenv(envOMPISessionDir) != "" {
		if err := mpirunRoot(ctx, &cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// mpirunRoot finds rank 0 through the job's session directory: rank 0
// listens and writes the job file, the others wait for it.
func mpirunRoot(ctx context.Context, cfg *Config) error {
	if n, err := strconv.Atoi(os.Getenv(envOMPINodes)); err == nil && n > 1 {
		return fmt.Errorf("tcp: a job on %d nodes, whose session directories are not shared: set %s to rank 0's host:port (mpirun -x %s=HOST:PORT)", n, EnvRoot, EnvRoot)
	}
	path := filepath.Join(os.Getenv(envOMPISessionDir), "sigcheck-tcp-"+filepath.Base(os.Getenv(envOMPIJob)))
	if cfg.Rank == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		var secret []byte
		if len(cfg.Secret) == 0 { // no key from mpirun: one of rank 0's, in the file (the user's only)
			key := make([]byte, 32)
			rand.Read(key)
			secret = []byte(hex.EncodeToString(key))
			cfg.Secret = secret
		}
		if err := writeJobFile(path, ln.Addr().String(), secret); err != nil {
			ln.Close()
			return err
		}
		cfg.Listener = ln
		return nil
	}
	wait := 5 * time.Millisecond
	for {
		b, err := readJobFile(path)
		if err == nil {
			addr, secret, err := ParseJobFile(b)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			cfg.Root = addr
			if len(cfg.Secret) == 0 {
				cfg.Secret = secret
			}
			if len(cfg.Secret) == 0 {
				return fmt.Errorf("%s: %w: no secret, and none from mpirun", path, ErrJobFile)
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("tcp: waiting for rank 0's job file %s: %w", path, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// maxJobFile bounds what is read of a job file.
const maxJobFile = 512

// writeJobFile writes the job file whole or not at all (a file of its own,
// renamed), readable by this user only.
func writeJobFile(path, addr string, secret []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".sigcheck-tcp-*")
	if err != nil {
		return fmt.Errorf("tcp: writing the job file: %w", err)
	}
	body := addr + "\n" + string(secret) + "\n"
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("tcp: writing the job file: %w", err)
	}
	return nil
}

func readJobFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxJobFile+1))
}

// ParseJobFile decodes the job file that rank 0 of an mpirun job writes
// for the others: its address (host:port) on the first line, and on the
// second the job's secret when mpirun gave none (else empty).
func ParseJobFile(b []byte) (addr string, secret []byte, err error) {
	if len(b) > maxJobFile {
		return "", nil, fmt.Errorf("%w: more than %d bytes", ErrJobFile, maxJobFile)
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) != 3 || len(lines[2]) != 0 {
		return "", nil, fmt.Errorf("%w: want two lines (address, secret), got %d", ErrJobFile, len(lines)-1)
	}
	host, port, err := net.SplitHostPort(string(lines[0]))
	if err != nil {
		return "", nil, fmt.Errorf("%w: line 1: %v", ErrJobFile, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || host == "" {
		return "", nil, fmt.Errorf("%w: line 1: %q is not a host and port", ErrJobFile, lines[0])
	}
	return string(lines[0]), bytes.Clone(lines[1]), nil
}
