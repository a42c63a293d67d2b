/* Embeds spin.ptx, NUL-terminated, as the string trainsim_ptx. */
	.section .rodata
	.globl	trainsim_ptx
	.type	trainsim_ptx, @object
trainsim_ptx:
	.incbin	"workload/spin.ptx"
	.byte	0
	.size	trainsim_ptx, . - trainsim_ptx
	.section .note.GNU-stack, "", @progbits
