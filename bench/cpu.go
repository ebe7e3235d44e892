package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuUse samples how busy the machine's CPUs were and how much of that
// was this program and the children it has waited for, so that the table
// can say whether other processes shared the machine during the run. It
// reads Linux's /proc/stat; elsewhere it reports nothing.
type cpuUse struct {
	busy, total int64         // jiffies of all CPUs, from /proc/stat
	ours        time.Duration // user and system time of this process and its waited children
	ok          bool
}

// sampleCPU reads the counters now.
func sampleCPU() cpuUse {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuUse{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return cpuUse{}
	}
	var u cpuUse
	for i, f := range fields[1:] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return cpuUse{}
		}
		u.total += n
		if i != 3 && i != 4 { // idle and iowait
			u.busy += n
		}
	}
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return cpuUse{}
	}
	for _, r := range []syscall.Rusage{self, kids} {
		u.ours += time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	u.ok = true
	return u
}

// othersShare returns the share of all CPU time between from and to that
// other processes used, and whether it could be told.
func othersShare(from, to cpuUse) (float64, bool) {
	if !from.ok || !to.ok || to.total <= from.total {
		return 0, false
	}
	const jiffy = 10 * time.Millisecond // USER_HZ is 100 on Linux
	total := time.Duration(to.total-from.total) * jiffy
	busy := time.Duration(to.busy-from.busy) * jiffy
	others := busy - (to.ours - from.ours)
	return max(0, float64(others)/float64(total)), true
}
