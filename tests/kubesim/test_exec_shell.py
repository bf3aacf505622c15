"""The built-in shell containers run: grammar, commands, the filesystem, tar and the TTY."""

from __future__ import annotations

import asyncio
import io
import tarfile

import pytest

from kubesim.shell import (
    IO,
    BufferWriter,
    BytesReader,
    FileSystem,
    Host,
    Shell,
    TtyInput,
    TtyOutput,
    repl,
)


def make_shell() -> Shell:
    fs = FileSystem()
    for d in ("/bin", "/etc", "/tmp", "/root", "/var/log"):
        fs.mkdir(d, parents=True)
    fs.write("/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\nnginx:x:101:101::/:/bin/false\n")
    fs.write("/etc/group", b"root:x:0:\nnginx:x:101:\n")
    fs.write("/etc/hosts", b"127.0.0.1\tlocalhost\n10.244.1.5\tweb-0\n")
    return Shell(
        fs,
        {"HOME": "/root", "PATH": "/bin", "GREETING": "hi"},
        Host(hostname="web-0", pod_ip="10.244.1.5"),
    )


def tty_session() -> tuple[TtyInput, BufferWriter, asyncio.Task[int]]:
    """An interactive shell on a terminal, running: keys go to the input, the screen is written."""
    screen = BufferWriter()
    out = TtyOutput(screen)
    tty = TtyInput(out)
    return tty, screen, asyncio.create_task(repl(make_shell(), IO(tty, out, out)))


async def run(sh: Shell, src: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = BufferWriter(), BufferWriter()
    status = await sh.run(src, IO(BytesReader(stdin), out, err))
    return status, out.data.decode(), err.data.decode()


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("echo \"$GREETING world\" '$GREETING'", "hi world $GREETING\n"),
        ("X=1; Y=$X$X; echo $Y ${Z:-default} ${#GREETING}", "11 default 2\n"),
        ("for i in a b c; do echo $i; done | tail -n 1", "c\n"),
        ("if [ -d /tmp ] && ! [ -f /nope ]; then echo yes; else echo no; fi", "yes\n"),
        ('n=a; until [ "$n" = aaa ]; do n=${n}a; echo $n; done', "aa\naaa\n"),
        ("n=0; while [ $n -lt 2 ]; do n=$(echo $n | wc -c); echo $n; done", "2\n"),
        ("echo $(hostname) $(pwd)", "web-0 /\n"),
        ("cd /etc && pwd && cd - > /dev/null && pwd", "/etc\n/\n"),
        ("false || echo recovered; true && echo chained", "recovered\nchained\n"),
        ("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f | grep -n two", "2:two\n"),
        ("printf '%s=%d\\n' a 1 b 2", "a=1\nb=2\n"),
        ("echo -e 'a\\tb' | cut -f 2", "b\n"),
        ("seq 3 | sort -r | head -n 1", "3\n"),
        ("env | grep GREETING", "GREETING=hi\n"),
        ("stat -c '%n %s %a %U %F' /etc/hosts", "/etc/hosts 37 644 root regular file\n"),
        ("mkdir -p /tmp/a/b && touch /tmp/a/b/c && find /tmp/a -type f", "/tmp/a/b/c\n"),
        (
            "ln -s /etc/hosts /tmp/h && readlink /tmp/h && readlink -f /tmp/h",
            "/etc/hosts\n/etc/hosts\n",
        ),
        ("echo *", "bin etc root tmp var\n"),
        (
            'i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i "$(( ($i * 10) / 4 ))"',
            "3 7\n",
        ),
        (
            "echo $((7 % 3)) $((-7 / 2)) $((1 < 2 && 3 > 4)) $((0x10)) $((i ? 1 : 2))",
            "1 -3 0 16 2\n",
        ),
        (
            "n=0; while [ $n -lt 3 ]; do n=$(expr $n + 1); done; echo $n; expr 6 \\* 7 - 2",
            "3\n40\n",
        ),
        ("expr length abc; expr 0; echo $?", "3\n0\n1\n"),
    ],
)
async def test_scripts(src: str, expected: str) -> None:
    status, out, err = await run(make_shell(), src)
    assert (status, out, err) == (0, expected, "")


async def test_bytes_by_number_and_names_that_are_not_utf8() -> None:
    """``printf '\\351'`` writes one byte (not UTF-8), which a name may hold and find prints."""
    sh, out = make_shell(), BufferWriter()
    script = "printf 'A\\101\\x41\\351|'; touch \"/tmp/$(printf 'caf\\351')\"; find /tmp -print0"
    assert await sh.run(script, IO(BytesReader(), out, BufferWriter())) == 0
    assert out.data == b"AAA\xe9|/tmp\x00/tmp/caf\xe9\x00"


async def test_errors_and_exit_status() -> None:
    sh = make_shell()
    assert await run(sh, "nosuch") == (127, "", "sh: nosuch: not found\n")
    assert await run(sh, "cat /missing; echo $?") == (
        0,
        "1\n",
        "cat: /missing: No such file or directory\n",
    )
    assert await run(sh, "exit 7; echo unreachable") == (7, "", "")
    assert (await run(sh, "if then"))[0] == 2
    status, _, err = await run(sh, "rm /etc")
    assert status == 1
    assert "Is a directory" in err
    assert (await run(sh, "ls /nope"))[0] == 2
    assert await run(sh, "echo $((1 +)); echo unreachable") == (
        2,
        "",
        "sh: arithmetic syntax error: 1 +\n",
    )
    assert await run(sh, "expr 1 / 0") == (2, "", "expr: division by zero\n")


async def test_ls_la_and_stat_default() -> None:
    sh = make_shell()
    sh.fs.lookup("/etc/hosts").uid = 101
    _, out, _ = await run(sh, "ls -la /etc")
    lines = out.splitlines()
    assert lines[0].startswith("total ")
    assert lines[1].startswith("drwxr-xr-x")
    assert lines[1].endswith(" .")
    hosts = next(line for line in lines if line.endswith(" hosts"))
    assert hosts.startswith("-rw-r--r--")
    assert " nginx " in hosts
    assert " 37 " in hosts
    _, out, _ = await run(sh, "stat /etc/passwd")
    assert out.startswith("  File: '/etc/passwd'\n  Size: 60")
    assert "regular file" in out
    assert "Access: (0644/-rw-r--r--)" in out


async def test_tar_round_trip_like_kubectl_cp() -> None:
    sh = make_shell()
    await run(
        sh, "mkdir -p /data/sub && echo hello > /data/sub/a.txt && ln -s a.txt /data/sub/link"
    )
    out = BufferWriter()
    await sh.run("tar cf - -C /data sub", IO(BytesReader(), out, BufferWriter()))
    with tarfile.open(fileobj=io.BytesIO(bytes(out.data))) as archive:
        names = archive.getnames()
    assert names == ["sub", "sub/a.txt", "sub/link"]
    other = make_shell()
    status, _, err = await run(other, "mkdir /dest && tar -xmf - -C /dest", stdin=bytes(out.data))
    assert (status, err) == (0, "")
    assert other.fs.read("/dest/sub/a.txt") == b"hello\n"
    assert other.fs.realpath("/dest/sub/link") == "/dest/sub/a.txt"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo("../../escape.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"x\n"))
    await run(other, "tar xf - -C /tmp", stdin=buf.getvalue())
    assert other.fs.exists("/tmp/escape.txt")
    assert not other.fs.exists("/escape.txt")


async def test_interactive_tty_session() -> None:
    tty, screen, session = tty_session()
    for keys in (b"echo hii\x7f there\r", b"cd /etc\r", b"exit 4\r"):
        await asyncio.sleep(0.01)
        await tty.feed(keys)
    assert await asyncio.wait_for(session, 2) == 4
    text = screen.data.decode()
    assert text.startswith("/ # ")
    assert "echo hii\b \b there\r\n" in text
    assert "hi there\r\n" in text
    assert "/etc # exit 4" in text


async def test_ctrl_c_interrupts_the_running_command() -> None:
    tty, screen, session = tty_session()
    await tty.feed(b"sleep 30\r")
    await asyncio.sleep(0.05)
    await tty.feed(b"\x03")
    await tty.feed(b"echo $?\r")
    tty.feed_eof()
    assert await asyncio.wait_for(session, 2) == 0
    assert "^C\r\n" in screen.data.decode()
    assert "130\r\n" in screen.data.decode()
