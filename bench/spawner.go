package main

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/spanprof/spanprof/speedup"
)

// The driver starts its runs from a spawner: a process of its own,
// started before the builds, that runs each binary and reports what it
// measured. The driver cannot start them itself and trust their peak
// resident set. On Linux a process counts in its ru_maxrss the peak of
// the memory it was forked with: Go starts a command with vfork, whose
// child shares its parent's memory until it execs, and exec keeps that
// memory's peak as the new process's starting maximum. Every RSS column
// then had the driver's own peak as its floor: 31 MiB in one run, where
// knapsack, nbody and nqueens all read 31.2 MiB and parallel deepchain
// 31.2 MiB against its 22 MiB under /usr/bin/time. The floor is now the
// spawner's own peak: 7 MiB when it starts, 13 MiB after a whole suite
// (TestSpawnerFloor checks that a large driver is not in it).

// spawnerEnv makes the bench binary a spawner (main).
const spawnerEnv = "SPANPROF_BENCH_SPAWNER"

// A spawnRequest asks the spawner to run Bin in Dir with exactly Env.
type spawnRequest struct {
	Bin, Dir string
	Env      []string
}

// A spawnReply is what one run measured and printed.
type spawnReply struct {
	Wall, CPU      float64 // seconds, as speedup.Run measures them
	MaxRSS         int64   // bytes, 0 where unknown
	Stdout, Stderr []byte
	Started        bool   // the process started (Err is then its exit)
	Err            string // empty if it started and exited 0
}

// spawnerMain serves requests from standard input until it closes.
func spawnerMain() int {
	dec := gob.NewDecoder(os.Stdin)
	enc := gob.NewEncoder(os.Stdout)
	for {
		var req spawnRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "bench spawner:", err)
			return 1
		}
		if err := enc.Encode(spawn(req)); err != nil {
			fmt.Fprintln(os.Stderr, "bench spawner:", err)
			return 1
		}
	}
}

// spawn runs one request.
func spawn(req spawnRequest) spawnReply {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(req.Bin)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Timed as speedup times its runs: from just before the process starts
	// to just after it is waited for.
	t, err := speedup.Run(cmd)
	rep := spawnReply{Started: cmd.ProcessState != nil, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if err != nil {
		rep.Err = err.Error()
	}
	if rep.Started {
		rep.Wall, rep.CPU, rep.MaxRSS = t.Wall, t.CPU, maxRSS(cmd.ProcessState)
	}
	return rep
}

// A spawner is the driver's end of a running spawner.
type spawner struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	enc *gob.Encoder
	dec *gob.Decoder
}

// startSpawner starts the running executable as a spawner.
func startSpawner() (*spawner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the spawner: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), spawnerEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the spawner: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the spawner: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the spawner: %w", err)
	}
	return &spawner{cmd: cmd, in: in, enc: gob.NewEncoder(in), dec: gob.NewDecoder(out)}, nil
}

// run runs req in the spawner.
func (s *spawner) run(req spawnRequest) (spawnReply, error) {
	var rep spawnReply
	if err := s.enc.Encode(req); err != nil {
		return rep, fmt.Errorf("the spawner: %w", err)
	}
	if err := s.dec.Decode(&rep); err != nil {
		return rep, fmt.Errorf("the spawner: %w", err)
	}
	return rep, nil
}

// close ends the spawner.
func (s *spawner) close() error {
	s.in.Close()
	return s.cmd.Wait()
}
