package shadow
import ("testing"; "unsafe")
func BenchmarkSpawnSyncSynthetic(b *testing.B) { m := &synthetic{}; e := newEngine(Config{Measure: m}, benchTable()); obj := unsafe.Pointer(new(wgStub)); for i:=0;i<b.N;i++ { m.now++; e.SpawnBegin(0); m.now++; e.SpawnEnd(obj); m.now++; e.Wait(obj) }; b.ReportMetric(float64(e.pp.liveNodes), "nodes"); b.ReportMetric(float64(e.rp.live), "recs"); b.ReportMetric(float64(len(e.pp.nodes)), "freenodes") }
