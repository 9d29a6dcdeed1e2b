//go:build mpi && !cgo

package mpi

// The mpi build tag asks for Open MPI through cgo: with CGO_ENABLED=0 the
// build stops here, on a name that says why.
var _ = the_mpi_build_tag_needs_cgo__set_CGO_ENABLED_1_and_install_libopenmpi_dev
