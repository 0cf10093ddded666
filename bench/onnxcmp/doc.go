// Package onnxcmp benchmarks the fallback running ONNX models against
// other runtimes on the same models and inputs. It is its own module so
// their dependencies stay out of the cann module graph.
//
// BenchmarkVsGonnx compares with gonnx (github.com/advancedclimatesystems/gonnx),
// a pure-Go ONNX runtime a user might pick instead:
//
//	cd bench/onnxcmp && go test -bench VsGonnx -benchtime 20x
//
// BenchmarkVsORT puts the fallback beside ONNX Runtime on every model of
// ge/onnx/testdata, one thread each, alternating runs, and prints the
// side-by-side table, both sides pinned to one CPU. ONNX Runtime comes from the npm package
// onnxruntime-node run by node (testdata/ort_runner.mjs), a development
// tool and never a dependency of the module: the benchmark looks in the
// node_modules directory named by CANN_ORT_NODE_PATH (else
// ORT_NODE_MODULES, else /tmp/ort/node_modules) and skips with a message
// when node or the package is absent.
//
//	npm install --prefix /tmp/ort --ignore-scripts onnxruntime-node@1.30.0
//	go test -run '^$' -bench VsORT -benchtime 40x -orttable /tmp/vs-ort.md
//
// BenchmarkThreads builds models above 1 GFLOP (a ResNet-18 at 224×224, a
// BERT-style encoder, a wide MLP; random weights made at run time) and
// times each on the fallback at GOMAXPROCS 1 and 2, alternating, beside
// the machine's own two-thread limit measured in the same iterations and,
// where it is installed, ONNX Runtime at 1 and 2 intra-op threads:
//
//	go test -run '^$' -bench Threads -benchtime 10x -threadstable /tmp/threads.md
package onnxcmp
