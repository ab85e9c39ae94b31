// Records outputs of Go's math/rand for kubegpu's Python port (kubegpu.sim.gorand).
//
// Run with Go 1.19 (Debian's golang-go 1.19.8 made the committed file):
//
//	go run tests/sim/data/go_math_rand_vectors.go > tests/sim/data/go_math_rand_vectors.json
//
// Each case names a seed, the calls made in order and their results. "scripted" cases feed a Rand from a
// Source that returns given Int63 values, to reach the rejection branches that seeded streams almost never do.
package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"runtime"
)

type call struct {
	Op     string  `json:"op"`
	Arg    int64   `json:"arg,omitempty"`
	Result any     `json:"result"`
}

type seeded struct {
	Seed  int64  `json:"seed"`
	Calls []call `json:"calls"`
}

type scripted struct {
	Int63 []int64 `json:"int63"`
	Calls []call  `json:"calls"`
	Used  int     `json:"used"`
}

type script struct {
	values []int64
	used   int
}

func (s *script) Int63() int64 { v := s.values[s.used]; s.used++; return v }
func (s *script) Seed(int64)   {}

func run(r *rand.Rand, ops []call) []call {
	out := make([]call, 0, len(ops))
	for _, c := range ops {
		switch c.Op {
		case "Uint64":
			c.Result = r.Uint64()
		case "Int63":
			c.Result = r.Int63()
		case "Uint32":
			c.Result = r.Uint32()
		case "Int31":
			c.Result = r.Int31()
		case "Int":
			c.Result = r.Int()
		case "Int63n":
			c.Result = r.Int63n(c.Arg)
		case "Int31n":
			c.Result = r.Int31n(int32(c.Arg))
		case "Intn":
			c.Result = r.Intn(int(c.Arg))
		case "Float64":
			c.Result = r.Float64()
		case "Perm":
			c.Result = r.Perm(int(c.Arg))
		case "Shuffle":
			xs := make([]int, c.Arg)
			for i := range xs {
				xs[i] = i
			}
			r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			c.Result = xs
		}
		out = append(out, c)
	}
	return out
}

func main() {
	mixed := []call{
		{Op: "Uint64"}, {Op: "Int63"}, {Op: "Uint32"}, {Op: "Int31"}, {Op: "Int"},
		{Op: "Int63n", Arg: 1000000007}, {Op: "Int63n", Arg: 1 << 40}, {Op: "Int63n", Arg: (1 << 62) + 1},
		{Op: "Int31n", Arg: 100}, {Op: "Int31n", Arg: 1 << 20}, {Op: "Int31n", Arg: (1 << 30) + 1},
		{Op: "Intn", Arg: 1}, {Op: "Intn", Arg: 2}, {Op: "Intn", Arg: 1213}, {Op: "Intn", Arg: 8152},
		{Op: "Intn", Arg: 1 << 31}, {Op: "Intn", Arg: 3 << 40},
		{Op: "Float64"}, {Op: "Float64"},
		{Op: "Perm", Arg: 0}, {Op: "Perm", Arg: 1}, {Op: "Perm", Arg: 25},
		{Op: "Shuffle", Arg: 0}, {Op: "Shuffle", Arg: 1}, {Op: "Shuffle", Arg: 40},
		{Op: "Uint64"},
	}
	var cases []seeded
	for _, s := range []int64{0, 1, 42, 51, 233, -1, -42, 2147483647, 2147483648, 1 << 40, -(1 << 62)} {
		r := rand.New(rand.NewSource(s))
		cases = append(cases, seeded{Seed: s, Calls: run(r, mixed)})
	}
	// the top-level functions after rand.Seed, as the FGD simulator calls them
	rand.Seed(42)
	top := []call{{Op: "Int"}, {Op: "Shuffle", Arg: 30}, {Op: "Intn", Arg: 8152}, {Op: "Intn", Arg: 8152}, {Op: "Perm", Arg: 30}}
	var global []call
	for _, c := range top {
		switch c.Op {
		case "Int":
			c.Result = rand.Int()
		case "Intn":
			c.Result = rand.Intn(int(c.Arg))
		case "Perm":
			c.Result = rand.Perm(int(c.Arg))
		case "Shuffle":
			xs := make([]int, c.Arg)
			for i := range xs {
				xs[i] = i
			}
			rand.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			c.Result = xs
		}
		global = append(global, c)
	}
	const max63 = 1<<63 - 1
	scripts := []scripted{
		// Int31n(3 << 29) rejects Int31 values above 2^31 - 1 - 2^31 % n (here the top half)
		{Int63: []int64{max63, max63 - 1, 5 << 32}, Calls: []call{{Op: "Int31n", Arg: 3 << 29}}},
		// Int63n(3 << 61) rejects the top of the range likewise
		{Int63: []int64{max63, 7}, Calls: []call{{Op: "Int63n", Arg: 3 << 61}}},
		// Float64 draws again when Int63 / 2^63 rounds to 1.0
		{Int63: []int64{max63, max63 - 511, 1 << 62}, Calls: []call{{Op: "Float64"}}},
		// Shuffle's int31n rejects products whose low 32 bits fall under 2^32 % n (n = 3, then 2)
		{Int63: []int64{0, 1 << 31, 3 << 31, 0, 1 << 62}, Calls: []call{{Op: "Shuffle", Arg: 3}}},
	}
	for i := range scripts {
		src := &script{values: scripts[i].Int63}
		scripts[i].Calls = run(rand.New(src), scripts[i].Calls)
		scripts[i].Used = src.used
	}
	out := map[string]any{
		"generator": "tests/sim/data/go_math_rand_vectors.go",
		"go":        runtime.Version(),
		"seeded":    cases,
		"global":    map[string]any{"seed": 42, "calls": global},
		"scripted":  scripts,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
