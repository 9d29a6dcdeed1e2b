// A Go program linked with cgo (so that LD_PRELOAD reaches it), for the
// test that the library refuses to load beside a second Go runtime.
package main

// int one(void) { return 1; }
import "C"

import "fmt"

func main() { fmt.Println("go program ran", C.one()) }
