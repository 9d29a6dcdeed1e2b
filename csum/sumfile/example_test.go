package sumfile_test

import (
	"fmt"
	"os"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/csum/sumfile"
)

// A line of xxhsum's, read; and the same sum written as sha256sum
// users would write a BSD line.
func Example() {
	l, err := sumfile.Parse("XXH3_72dcb18b67a17dff  nine")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := l.Resolve(nil)
	h := a.New()
	h.Write([]byte("123456789"))
	fmt.Println(l.Name, a.Name, string(h.Sum(nil)) == string(l.Sum))

	sha, _ := csum.Lookup("sha256")
	d := sha.New()
	d.Write([]byte("123456789"))
	os.Stdout.Write(sumfile.Append(nil, sha, d.Sum(nil), "nine", true))
	// Output:
	// nine xxh3 true
	// SHA256 (nine) = 15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225
}
