package native_test

import (
	"errors"
	"fmt"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/native"
)

// Open finds libhccl.so ($CANN_HCCL_LIB, then $ASCEND_HOME_PATH/lib64, …);
// functions the installed release lacks report ErrNotSupported.
func ExampleOpen() {
	b, err := native.Open()
	if err != nil {
		var nf *native.NotFoundError
		if errors.As(err, &nf) {
			fmt.Println("no HCCL library here:", err)
			return
		}
		panic(err)
	}
	defer b.Close()
	fmt.Println("loaded", b.Path())
	if !b.Has("HcclBatchGet") {
		fmt.Println("one-sided reads not available; use collectives")
	}
	var backend hccl.Backend = b // hand it to hccl.InitRootInfo, hccl.InitAll, …
	_ = backend
}
