/*
 * rtmux-debugcheck: what a debugger and a profiler need from the kernel, checked the way gdb and perf
 * use it, with figures the program computes (so a test matches results, never text it typed).
 *
 *   rtmux-debugcheck step | break | watch | perf | all
 *
 *   step   a traced child runs a loop of a known number of instructions; the parent single-steps it
 *          with PTRACE_SINGLESTEP (gdb's stepi) from its first instruction to its last:
 *            step: N steps for N instructions
 *   break  a hardware breakpoint (PTRACE_SETREGSET NT_ARM_HW_BREAK, gdb's hbreak) on the loop's first
 *          instruction stops the child there:
 *            break: stopped at the breakpoint (TRAP_HWBKPT)
 *   watch  a hardware watchpoint (NT_ARM_HW_WATCH, gdb's watch) on a variable the child writes stops
 *          it with the variable's address:
 *            watch: stopped at the write (TRAP_HWBKPT), address right
 *   perf   perf_event_open counts the instructions and cycles (user space only) of a loop of a known
 *          number of instructions:
 *            perf: instructions N for a M-instruction loop, cycles C
 *
 * Exit status 0 when every check asked for passed; 1 when one failed (what failed on stderr); 2 for a
 * usage error; 77 when the machine cannot run the check at all (break/watch off arm64, no permission
 * for ptrace or perf), so a host test can tell "cannot" from "wrong".
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <asm/ptrace.h> /* struct user_pt_regs, struct user_hwdebug_state */
#endif

#define EXIT_CANNOT 77
/* Iterations of the stepped loop (two instructions each) and of the counted one. */
#define STEP_ITERS 500u
#define PERF_ITERS 1000000u
/* perf: what may come on top of the loop: the ioctl's return path in user space, and under QEMU's icount
 * with several vCPUs the other CPUs' instructions during the loop (QEMU counts them too; bare-metal
 * evidence in tests/guests/debug/main.c): at most 1% of the loop. */
#define PERF_SLACK(n) ((n) / 100u)

/* loop(n): n iterations of two instructions, then return; loop_end is the return instruction. */
void loop(uint64_t n);
extern const char loop_end[];
#if defined(__aarch64__)
__asm__(".text\n.globl loop\n.globl loop_end\n.type loop, %function\n"
        "loop:\n1: subs x0, x0, #1\n b.ne 1b\nloop_end:\n ret\n.size loop, .-loop\n");
#elif defined(__x86_64__)
__asm__(".text\n.globl loop\n.globl loop_end\n.type loop, @function\n"
        "loop:\n1: dec %rdi\n jnz 1b\nloop_end:\n ret\n.size loop, .-loop\n");
#else
#error "rtmux-debugcheck: arm64 (the Linux guest) or x86_64 (its host unit test) only"
#endif

static volatile uint64_t watched;

static int fail(const char *what)
{
    fprintf(stderr, "rtmux-debugcheck: %s\n", what);
    return 1;
}

static int cannot(const char *what)
{
    fprintf(stderr, "rtmux-debugcheck: cannot check: %s (%s)\n", what, strerror(errno));
    return EXIT_CANNOT;
}

/* The program counter of a stopped tracee. */
static bool tracee_pc(pid_t pid, uint64_t *pc)
{
#if defined(__aarch64__)
    struct user_pt_regs regs;
    struct iovec iov = {&regs, sizeof(regs)};
    if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) != 0) {
        return false;
    }
    *pc = regs.pc;
#else
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0) {
        return false;
    }
    *pc = regs.rip;
#endif
    return true;
}

/* A child that stops itself (SIGSTOP) under the parent's trace, then runs the loop and writes `watched`,
 * then exits 0. Returns its pid once it has stopped, or -1. */
static pid_t traced_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
            _exit(EXIT_CANNOT);
        }
        raise(SIGSTOP);
        loop(STEP_ITERS);
        watched = 42;
        _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    if (!WIFSTOPPED(status)) {
        errno = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_CANNOT ? EPERM : ECHILD;
        return -1;
    }
    return pid;
}

/* Lets the child run to its end; 0 when it exited 0. */
static int finish(pid_t pid)
{
    int status;
    if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid) {
        kill(pid, SIGKILL);
        return fail("the child could not be resumed");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        kill(pid, SIGKILL);
        return fail("the child did not finish cleanly");
    }
    return 0;
}

/* One single step; false when the child did not stop with SIGTRAP. */
static bool single_step(pid_t pid)
{
    int status;
    return ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) == 0 && waitpid(pid, &status, 0) == pid &&
           WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
}

static int check_step(void)
{
    pid_t pid = traced_child();
    if (pid < 0) {
        return cannot("a traced child");
    }
    uint64_t pc = 0, start = (uint64_t)(uintptr_t)loop, end = (uint64_t)(uintptr_t)loop_end;
    /* From the SIGSTOP (inside raise) to the loop's first instruction, uncounted: the C library's code. */
    unsigned guard = 0;
    while (tracee_pc(pid, &pc) && pc != start && guard++ < 100000u) {
        if (!single_step(pid)) {
            kill(pid, SIGKILL);
            return fail("step: a single step did not stop the child");
        }
    }
    if (pc != start) {
        kill(pid, SIGKILL);
        return fail("step: never reached the loop");
    }
    unsigned steps = 0;
    while (pc != end && steps < 4u * STEP_ITERS) {
        if (!single_step(pid) || !tracee_pc(pid, &pc)) {
            kill(pid, SIGKILL);
            return fail("step: a single step did not stop the child");
        }
        steps++;
    }
    printf("step: %u steps for %u instructions\n", steps, 2u * STEP_ITERS);
    int r = finish(pid);
    return r != 0 ? r : steps == 2u * STEP_ITERS ? 0 : fail("step: steps and instructions differ");
}

#if defined(__aarch64__)
/* Hardware breakpoint or watchpoint 0 of a tracee (the arm64 regsets gdb uses). */
static bool set_hw_point(pid_t pid, int regset, uint64_t addr, uint32_t ctrl)
{
    struct user_hwdebug_state state;
    memset(&state, 0, sizeof(state));
    state.dbg_regs[0].addr = addr;
    state.dbg_regs[0].ctrl = ctrl;
    /* the header (dbg_info, pad) and one register pair */
    struct iovec iov = {&state, offsetof(struct user_hwdebug_state, dbg_regs) + sizeof(state.dbg_regs[0])};
    return ptrace(PTRACE_SETREGSET, pid, (void *)(intptr_t)regset, &iov) == 0;
}

/* Runs the child to its next stop; true when that is a SIGTRAP from a hardware point, with its address. */
static bool run_to_hw_trap(pid_t pid, uint64_t *addr)
{
    int status;
    siginfo_t si;
    if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        WSTOPSIG(status) != SIGTRAP || ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) != 0) {
        return false;
    }
    *addr = (uint64_t)(uintptr_t)si.si_addr;
    return si.si_code == TRAP_HWBKPT;
}

/* ctrl of arm64's ptrace hardware points: enable, privilege EL0, type, length (byte mask) */
#define HW_CTRL(type, len) (1u | (2u << 1) | ((uint32_t)(type) << 3) | ((uint32_t)(len) << 5))
#define HW_EXEC            0u
#define HW_STORE           2u
#define HW_LEN_INSN        0xfu
#define HW_LEN_8           0xffu

static int check_break(void)
{
    pid_t pid = traced_child();
    if (pid < 0) {
        return cannot("a traced child");
    }
    uint64_t at = 0, pc = 0;
    if (!set_hw_point(pid, NT_ARM_HW_BREAK, (uint64_t)(uintptr_t)loop, HW_CTRL(HW_EXEC, HW_LEN_INSN))) {
        kill(pid, SIGKILL);
        return fail("break: the kernel refused the hardware breakpoint");
    }
    bool hit = run_to_hw_trap(pid, &at) && tracee_pc(pid, &pc) && pc == (uint64_t)(uintptr_t)loop;
    if (!hit) {
        kill(pid, SIGKILL);
        return fail("break: the child did not stop at the breakpoint");
    }
    printf("break: stopped at the breakpoint (TRAP_HWBKPT)\n");
    set_hw_point(pid, NT_ARM_HW_BREAK, 0, 0);
    return finish(pid);
}

static int check_watch(void)
{
    pid_t pid = traced_child();
    if (pid < 0) {
        return cannot("a traced child");
    }
    uint64_t at = 0, want = (uint64_t)(uintptr_t)&watched;
    if (!set_hw_point(pid, NT_ARM_HW_WATCH, want, HW_CTRL(HW_STORE, HW_LEN_8))) {
        kill(pid, SIGKILL);
        return fail("watch: the kernel refused the hardware watchpoint");
    }
    if (!run_to_hw_trap(pid, &at)) {
        kill(pid, SIGKILL);
        return fail("watch: the child did not stop at the write");
    }
    printf("watch: stopped at the write (TRAP_HWBKPT), address %s\n", at == want ? "right" : "wrong");
    set_hw_point(pid, NT_ARM_HW_WATCH, 0, 0);
    int r = finish(pid);
    return r != 0 ? r : at == want ? 0 : fail("watch: the reported address is not the variable's");
}
#else
static int check_break(void)
{
    errno = ENOSYS;
    return cannot("hardware breakpoints are checked on arm64 only");
}

static int check_watch(void)
{
    errno = ENOSYS;
    return cannot("hardware watchpoints are checked on arm64 only");
}
#endif

static int counter(uint64_t config, int group)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = group < 0;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, group, 0);
}

static int check_perf(void)
{
    int insns = counter(PERF_COUNT_HW_INSTRUCTIONS, -1);
    if (insns < 0) {
        return cannot("perf_event_open(PERF_COUNT_HW_INSTRUCTIONS)");
    }
    int cycles = counter(PERF_COUNT_HW_CPU_CYCLES, insns);
    if (cycles < 0) {
        return cannot("perf_event_open(PERF_COUNT_HW_CPU_CYCLES)");
    }
    uint64_t n[2];
    if (ioctl(insns, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) != 0 ||
        ioctl(insns, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) {
        return fail("perf: the counters could not be started");
    }
    loop(PERF_ITERS);
    if (ioctl(insns, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) != 0 ||
        read(insns, &n[0], sizeof(n[0])) != sizeof(n[0]) ||
        read(cycles, &n[1], sizeof(n[1])) != sizeof(n[1])) {
        return fail("perf: the counters could not be read");
    }
    uint64_t want = 2u * PERF_ITERS + 1u;
    printf("perf: instructions %" PRIu64 " for a %" PRIu64 "-instruction loop, cycles %" PRIu64 "\n", n[0],
           want, n[1]);
    close(cycles);
    close(insns);
    if (n[0] < want || n[0] > want + PERF_SLACK(want)) {
        return fail("perf: the instruction count is not the loop's");
    }
    return n[1] > 0 ? 0 : fail("perf: no cycles counted");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: rtmux-debugcheck step | break | watch | perf | all\n");
        return 2;
    }
    const char *what = argv[1];
    static const struct {
        const char *name;
        int (*run)(void);
    } checks[] = {{"step", check_step}, {"break", check_break}, {"watch", check_watch}, {"perf", check_perf}};
    bool all = strcmp(what, "all") == 0, known = all;
    int worst = 0;
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        if (all || strcmp(what, checks[i].name) == 0) {
            known = true;
            int r = checks[i].run();
            worst = r == 1 || worst == 1 ? 1 : r > worst ? r : worst;
        }
    }
    if (!known) {
        fprintf(stderr, "rtmux-debugcheck: unknown check %s\n", what);
        return 2;
    }
    return worst;
}
