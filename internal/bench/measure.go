package bench

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Usage is what the benchmark process spent on one scenario.
type Usage struct {
	Wall time.Duration
	// CPU is user plus system time of the whole process (getrusage), which runs the operator
	// and the benchmark's own light bookkeeping; the simulator, API server and etcd are other
	// processes.
	CPU time.Duration
	// PeakHeap is the highest HeapInuse+StackInuse sampled; PeakRSS the highest resident set.
	PeakHeap uint64
	PeakRSS  uint64
}

// Meter samples the process's memory in the background and measures windows of work.
type Meter struct {
	interval time.Duration
	self     procfs.Proc
	mu       sync.Mutex
	peakHeap uint64
	peakRSS  uint64
	stop     chan struct{}
	stopped  chan struct{}
}

// Window is the start of a measured piece of work.
type Window struct {
	started time.Time
	cpu     time.Duration
}

// StartMeter starts sampling memory every interval (osmops-bench uses 50 ms).
func StartMeter(interval time.Duration) (*Meter, error) {
	self, err := procfs.Self()
	if err != nil {
		return nil, err
	}
	m := &Meter{interval: interval, self: self, stop: make(chan struct{}), stopped: make(chan struct{})}
	go m.sample()
	return m, nil
}

// Stop ends the sampling.
func (m *Meter) Stop() {
	close(m.stop)
	<-m.stopped
}

func (m *Meter) sample() {
	defer close(m.stopped)
	ticker := time.NewTicker(m.interval)
	defer ticker.Stop()
	for {
		m.record()
		select {
		case <-ticker.C:
		case <-m.stop:
			return
		}
	}
}

// record takes one sample.
func (m *Meter) record() {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	var rss uint64
	if status, err := m.self.NewStatus(); err == nil {
		rss = status.VmRSS
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peakHeap = max(m.peakHeap, stats.HeapInuse+stats.StackInuse)
	m.peakRSS = max(m.peakRSS, rss)
}

// Start collects the garbage of earlier work and gives the freed memory back to the system,
// so that the peaks are this window's, and opens a window.
func (m *Meter) Start() Window {
	debug.FreeOSMemory()
	m.mu.Lock()
	m.peakHeap, m.peakRSS = 0, 0
	m.mu.Unlock()
	m.record()
	return Window{started: time.Now(), cpu: cpuTime()}
}

// Measure closes a window.
func (m *Meter) Measure(w Window) Usage {
	wall := time.Since(w.started)
	cpu := cpuTime() - w.cpu
	m.record()
	m.mu.Lock()
	defer m.mu.Unlock()
	return Usage{Wall: wall, CPU: cpu, PeakHeap: m.peakHeap, PeakRSS: m.peakRSS}
}

// cpuTime is the process's user plus system time so far.
func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// ChildCPU is the user plus system time so far of the benchmark's child processes by command
// name: envtest's kube-apiserver and etcd, and the simulators, which share the machine's cores
// with the operator. A process that ended is not counted.
func ChildCPU() (map[string]time.Duration, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	byCommand := map[string]time.Duration{}
	for _, p := range procs {
		stat, err := p.Stat()
		if err != nil || stat.PPID != self {
			continue // ended meanwhile, or not ours
		}
		byCommand[stat.Comm] += time.Duration(stat.CPUTime() * float64(time.Second))
	}
	return byCommand, nil
}

// cpuSince is the CPU time each command of after spent since before (ChildCPU).
func cpuSince(before, after map[string]time.Duration) map[string]time.Duration {
	spent := make(map[string]time.Duration, len(after))
	for command, cpu := range after {
		spent[command] = max(cpu-before[command], 0) // a process of that name that ended took its time with it
	}
	return spent
}
