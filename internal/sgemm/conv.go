package sgemm

import (
	"errors"
	"fmt"
)

// Conv describes a 2-D convolution over NCHW float32 tensors, as ONNX Conv
// and ConvTranspose define it: x[N, C, H, W], groups G, output channels K.
// Conv2D's weight is w[K, C/G, R, S]; ConvTranspose2D's is w[C, K/G, R, S].
type Conv struct {
	N, C, H, W       int // input
	K, R, S          int // output channels, kernel height and width
	Groups           int // 0 means 1
	StrideH, StrideW int // 0 means 1
	DilH, DilW       int // 0 means 1
	PadT, PadL       int // padding before
	PadB, PadR       int // padding after
	OutPadH, OutPadW int // ConvTranspose only: extra rows/columns at the end
}

// ErrConv reports an inconsistent convolution.
var ErrConv = errors.New("sgemm: bad convolution")

func (p *Conv) defaults() {
	for _, v := range []*int{&p.Groups, &p.StrideH, &p.StrideW, &p.DilH, &p.DilW} {
		if *v == 0 {
			*v = 1
		}
	}
}

func (p *Conv) check() error {
	p.defaults()
	for _, v := range []int{p.N, p.C, p.H, p.W, p.K, p.R, p.S, p.PadT, p.PadL, p.PadB, p.PadR, p.OutPadH, p.OutPadW} {
		if v < 0 {
			return fmt.Errorf("%w: negative size in %+v", ErrConv, *p)
		}
	}
	if p.Groups < 1 || p.StrideH < 1 || p.StrideW < 1 || p.DilH < 1 || p.DilW < 1 {
		return fmt.Errorf("%w: groups, strides and dilations must be ≥ 1: %+v", ErrConv, *p)
	}
	if p.C%p.Groups != 0 || p.K%p.Groups != 0 {
		return fmt.Errorf("%w: %d input and %d output channels are not divisible by %d groups", ErrConv, p.C, p.K, p.Groups)
	}
	return nil
}

// ConvOut returns the output height and width of Conv2D (p's zero fields
// take their defaults).
func (p Conv) ConvOut() (oh, ow int) {
	p.defaults()
	oh = (p.H+p.PadT+p.PadB-p.DilH*(p.R-1)-1)/p.StrideH + 1
	ow = (p.W+p.PadL+p.PadR-p.DilW*(p.S-1)-1)/p.StrideW + 1
	return oh, ow
}

// TransposeOut returns the output height and width of ConvTranspose2D.
func (p Conv) TransposeOut() (oh, ow int) {
	p.defaults()
	oh = (p.H-1)*p.StrideH - p.PadT - p.PadB + p.DilH*(p.R-1) + 1 + p.OutPadH
	ow = (p.W-1)*p.StrideW - p.PadL - p.PadR + p.DilW*(p.S-1) + 1 + p.OutPadW
	return oh, ow
}

func need(name string, s []float32, n int) error {
	if len(s) < n {
		return fmt.Errorf("%w: %s holds %d elements, needs %d", ErrConv, name, len(s), n)
	}
	return nil
}

// Conv2D computes y[N, K, OH, OW] = conv(x, w) + bias (bias[K] or nil) as
// an implicit GEMM: per image and group, the receptive fields are the
// columns of a [C/G·R·S, OH·OW] matrix (an Im2col operand, packed straight
// from the image, never written out), and one GEMM with w's
// [K/G, C/G·R·S] rows gives the group's output rows. Each output element
// is the GEMM's dot product over (c, r, s) in a fixed order, so results
// are deterministic whatever the thread count, and bit-identical to an
// explicit im2col followed by the same GEMM.
func Conv2D(p Conv, x, w, bias, y []float32) error { return conv2D(p, x, w, bias, y, false) }

// conv2D is Conv2D; explicit writes the im2col matrix out first (the
// former path, kept as a benchmark baseline and a test reference).
func conv2D(p Conv, x, w, bias, y []float32, explicit bool) error {
	if err := p.check(); err != nil {
		return err
	}
	oh, ow := p.ConvOut()
	if oh < 1 || ow < 1 {
		return fmt.Errorf("%w: empty output %d×%d", ErrConv, oh, ow)
	}
	cg, kg := p.C/p.Groups, p.K/p.Groups
	crs, ohw := cg*p.R*p.S, oh*ow
	for _, e := range []error{need("x", x, p.N*p.C*p.H*p.W), need("w", w, p.K*crs), need("y", y, p.N*p.K*ohw)} {
		if e != nil {
			return e
		}
	}
	if bias != nil {
		if err := need("bias", bias, p.K); err != nil {
			return err
		}
	}
	var col []float32
	if explicit {
		colBuf := colPool.get(crs * ohw)
		defer colPool.put(colBuf)
		col = *colBuf
	}
	if !explicit && p.Groups == 1 { // all images in one call
		return convImages(p, x, w, bias, y, oh, ow)
	}
	for n := range p.N {
		for g := range p.Groups {
			xg := x[(n*p.C+g*cg)*p.H*p.W:]
			b := Matrix{F32: col, Stride: ohw}
			if explicit {
				im2col(col, xg, &p, cg, oh, ow)
			} else {
				b = Matrix{Im2col: &Im2col{X: xg[:cg*p.H*p.W], C: cg, In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow},
					K: [3]int{1, p.R, p.S}, Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, p.DilH, p.DilW}, Pad: [3]int{0, p.PadT, p.PadL}}}
			}
			yg := y[(n*p.K+g*kg)*ohw : (n*p.K+(g+1)*kg)*ohw]
			beta := float32(0)
			if bias != nil {
				for k := range kg {
					row := yg[k*ohw : (k+1)*ohw]
					for i := range row {
						row[i] = bias[g*kg+k]
					}
				}
				beta = 1
			}
			call := Call{M: kg, N: ohw, K: crs, Alpha: 1, Beta: beta,
				A: Matrix{F32: w[g*kg*crs : (g+1)*kg*crs], Stride: crs},
				B: b,
				C: yg, LDC: ohw}
			if err := ConvGemm(&call); err != nil {
				return err
			}
		}
	}
	return nil
}

// convImages is Conv2D for one group: the bias written into y first
// (beta 1), then every image's product through ConvGemmImages.
func convImages(p Conv, x, w, bias, y []float32, oh, ow int) error {
	crs, ohw := p.C*p.R*p.S, oh*ow
	beta := float32(0)
	if bias != nil {
		for n := range p.N {
			for k := range p.K {
				row := y[(n*p.K+k)*ohw : (n*p.K+k+1)*ohw]
				for i := range row {
					row[i] = bias[k]
				}
			}
		}
		beta = 1
	}
	call := Call{M: p.K, N: ohw, K: crs, Alpha: 1, Beta: beta,
		A: Matrix{F32: w[:p.K*crs], Stride: crs},
		B: Matrix{Im2col: &Im2col{X: x[:p.N*p.C*p.H*p.W], C: p.C, In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow},
			K: [3]int{1, p.R, p.S}, Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, p.DilH, p.DilW}, Pad: [3]int{0, p.PadT, p.PadL}}},
		C: y[:p.N*p.K*ohw], LDC: ohw}
	return ConvGemmImages(&call, p.N, p.C*p.H*p.W, p.K*ohw)
}

// im2col (the explicit path) writes col[(c·R+r)·S+s][oy·OW+ox] = x[c][oy·sh+r·dh-pt][ox·sw+s·dw-pl]
// (0 outside the image).
func im2col(col, x []float32, p *Conv, cg, oh, ow int) {
	ohw := oh * ow
	for c := range cg {
		img := x[c*p.H*p.W : (c+1)*p.H*p.W]
		for r := range p.R {
			for s := range p.S {
				dst := col[((c*p.R+r)*p.S+s)*ohw:][:ohw]
				for oy := range oh {
					iy := oy*p.StrideH + r*p.DilH - p.PadT
					row := dst[oy*ow : (oy+1)*ow]
					if iy < 0 || iy >= p.H {
						clear(row)
						continue
					}
					src := img[iy*p.W : (iy+1)*p.W]
					for ox := range row {
						ix := ox*p.StrideW + s*p.DilW - p.PadL
						if ix < 0 || ix >= p.W {
							row[ox] = 0
						} else {
							row[ox] = src[ix]
						}
					}
				}
			}
		}
	}
}

// ConvTranspose2D computes y[N, K, OH, OW] = convtranspose(x, w) + bias
// with w[C, K/G, R, S]: per image and group one GEMM gives
// col[K/G·R·S, H·W] = w_gᵀ·x_g, and col2im adds each column into the
// output positions it covers, in a fixed order (deterministic).
func ConvTranspose2D(p Conv, x, w, bias, y []float32) error {
	if err := p.check(); err != nil {
		return err
	}
	oh, ow := p.TransposeOut()
	if oh < 1 || ow < 1 {
		return fmt.Errorf("%w: empty output %d×%d", ErrConv, oh, ow)
	}
	cg, kg := p.C/p.Groups, p.K/p.Groups
	krs, hw := kg*p.R*p.S, p.H*p.W
	for _, e := range []error{need("x", x, p.N*p.C*hw), need("w", w, p.C*krs), need("y", y, p.N*p.K*oh*ow)} {
		if e != nil {
			return e
		}
	}
	if bias != nil {
		if err := need("bias", bias, p.K); err != nil {
			return err
		}
	}
	colBuf := colPool.get(krs * hw)
	defer colPool.put(colBuf)
	col := *colBuf
	for n := range p.N {
		for g := range p.Groups {
			call := Call{M: krs, N: hw, K: cg, Alpha: 1,
				A: Matrix{F32: w[g*cg*krs : (g+1)*cg*krs], Stride: krs, Trans: true},
				B: Matrix{F32: x[(n*p.C+g*cg)*hw : (n*p.C+(g+1)*cg)*hw], Stride: hw},
				C: col, LDC: hw}
			if err := Gemm(&call); err != nil {
				return err
			}
			yg := y[(n*p.K+g*kg)*oh*ow : (n*p.K+(g+1)*kg)*oh*ow]
			for k := range kg {
				out := yg[k*oh*ow : (k+1)*oh*ow]
				b := float32(0)
				if bias != nil {
					b = bias[g*kg+k]
				}
				for i := range out {
					out[i] = b
				}
				col2im(out, col[k*p.R*p.S*hw:], &p, oh, ow)
			}
		}
	}
	return nil
}

// col2im adds col[(r·S+s)][iy·W+ix] into out[iy·sh+r·dh-pt][ix·sw+s·dw-pl]
// for positions inside the output.
func col2im(out, col []float32, p *Conv, oh, ow int) {
	hw := p.H * p.W
	for r := range p.R {
		for s := range p.S {
			src := col[(r*p.S+s)*hw:][:hw]
			for iy := range p.H {
				oy := iy*p.StrideH + r*p.DilH - p.PadT
				if oy < 0 || oy >= oh {
					continue
				}
				dst := out[oy*ow : (oy+1)*ow]
				for ix, v := range src[iy*p.W : (iy+1)*p.W] {
					if ox := ix*p.StrideW + s*p.DilW - p.PadL; ox >= 0 && ox < ow {
						dst[ox] += v
					}
				}
			}
		}
	}
}
