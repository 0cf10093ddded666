package hccl

import (
	"encoding/binary"
	"unsafe"
)

// Communicator configuration constants (hccl_types.h).
const (
	// CommConfigVersion is the HCCL_COMM_CONFIG_VERSION this package writes:
	// version 10, the layout of CANN 8.x / 26.0 (pytorch v2.9.0-26.0.0),
	// whose struct ends at hcclQos. A library that knows newer versions
	// reads only the fields of version 10; an older one reads the prefix it
	// knows, as HCCL's versioned config is designed to.
	CommConfigVersion uint32 = 10
	// CommConfigSize is sizeof(HcclCommConfig) for CommConfigVersion.
	CommConfigSize = 2232
	// CommConfigMagic is HCCL_COMM_CONFIG_MAGIC_WORD.
	CommConfigMagic uint32 = 0xf0f0f0f0
	// CommConfigInfoBytes is HCCL_COMM_CONFIG_INFO_BYTES, the header.
	CommConfigInfoBytes = 24

	// ConfigNotSet marks a uint32 field left to the library default
	// (HCCL_COMM_*_CONFIG_NOT_SET).
	ConfigNotSet uint32 = 0xffffffff
	// ExecTimeoutNotSet is HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET.
	ExecTimeoutNotSet int32 = -1

	commAlgoMaxLength        = 1600
	commRetryEnableMaxLength = 50
	commRetryParamsMaxLength = 128
	commBufferNameMaxLength  = 128
	commUdiMaxLength         = 128
)

// CommConfig is HcclCommConfig, version 10 (2232 bytes), with the C layout.
// Create it with NewCommConfig (or call Init), which re-implements the
// header's inline HcclCommConfigInit: the 24-byte header holds {size_t size;
// u32 magic; u32 version; u64 0} and every field gets its "not set" value.
// Then change the fields you need. Not safe for concurrent mutation; a
// backend only reads it during the init call.
type CommConfig struct {
	info                   [CommConfigInfoBytes]byte
	BufferSize             uint32 // MB of the CCL buffer; ConfigNotSet = library default (200)
	Deterministic          uint32 // 1 = deterministic reductions; ConfigNotSet = default
	CommName               [CommNameMaxLength]byte
	Udi                    [commUdiMaxLength]byte
	OpExpansionMode        uint32 // 0 default, 1 host, 2 aicpu, 3 aiv
	RdmaTrafficClass       uint32
	RdmaServiceLevel       uint32
	WorldRankID            uint32
	JobID                  uint64
	ACLGraphZeroCopyEnable uint8
	_                      [3]byte
	ExecTimeOut            int32 // seconds; ExecTimeoutNotSet = HCCL_EXEC_TIMEOUT / default
	Algo                   [commAlgoMaxLength]byte
	RetryEnable            [commRetryEnableMaxLength]byte
	RetryParams            [commRetryParamsMaxLength]byte
	BufferName             [commBufferNameMaxLength]byte
	_                      [2]byte
	Qos                    uint32
}

// Compile-time check of the layout the C library expects.
var _ [CommConfigSize - unsafe.Sizeof(CommConfig{})]byte
var _ [unsafe.Sizeof(CommConfig{}) - CommConfigSize]byte

// NewCommConfig returns a config initialised as HcclCommConfigInit does.
func NewCommConfig() *CommConfig {
	c := new(CommConfig)
	c.Init()
	return c
}

// Init resets c as HcclCommConfigInit does.
func (c *CommConfig) Init() {
	if c == nil {
		return
	}
	*c = CommConfig{}
	binary.LittleEndian.PutUint64(c.info[0:], CommConfigSize)
	binary.LittleEndian.PutUint32(c.info[8:], CommConfigMagic)
	binary.LittleEndian.PutUint32(c.info[12:], CommConfigVersion)
	// info[16:24] is the reserved u64, zero.
	c.BufferSize = ConfigNotSet
	c.Deterministic = ConfigNotSet
	c.RdmaTrafficClass = ConfigNotSet
	c.RdmaServiceLevel = ConfigNotSet
	c.ExecTimeOut = ExecTimeoutNotSet
	c.Qos = ConfigNotSet
}

// Header returns the size, magic word and version written by Init (all
// zero for a config that was never initialised). Only little-endian
// targets are supported, like the library.
func (c *CommConfig) Header() (size uint64, magic, version uint32) {
	if c == nil {
		return 0, 0, 0
	}
	return binary.LittleEndian.Uint64(c.info[0:]), binary.LittleEndian.Uint32(c.info[8:]),
		binary.LittleEndian.Uint32(c.info[12:])
}

// Initialized reports whether the header carries the magic word.
func (c *CommConfig) Initialized() bool {
	if c == nil {
		return false
	}
	_, m, _ := c.Header()
	return m == CommConfigMagic
}

// SetCommName stores name as the NUL-terminated hcclCommName; it must be
// shorter than CommNameMaxLength bytes and contain no NUL.
func (c *CommConfig) SetCommName(name string) error {
	if c == nil {
		return NilHandle("CommConfig.SetCommName", "config")
	}
	if len(name) >= CommNameMaxLength {
		return Errorf("HcclCommConfig", EPara, "comm name of %d bytes, limit %d", len(name), CommNameMaxLength-1)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return Errorf("HcclCommConfig", EPara, "comm name contains NUL")
		}
	}
	c.CommName = [CommNameMaxLength]byte{}
	copy(c.CommName[:], name)
	return nil
}

// Name returns hcclCommName up to its NUL.
func (c *CommConfig) Name() string {
	if c == nil {
		return ""
	}
	return cString(c.CommName[:])
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	for i, x := range b {
		if x == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// CString returns the Go string of a NUL-terminated byte buffer such as the
// one HcclGetCommName fills; backends use it.
func CString(b []byte) string { return cString(b) }
