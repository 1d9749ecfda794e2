#!/usr/bin/env python3
"""Real-browser check of `gcbench report`: renders a report from a CPU mem run plus the synthetic
GPU fixture, screenshots it in headless Chromium, and checks that the page is not blank, shows
coloured chart marks, and logged no console errors. Standard library only (PNG decoded with
zlib). Exit 77 (ctest SKIP_RETURN_CODE) when Chromium is absent.

usage: report_browser_test.py GCBENCH PROJECT_DIR OUT_DIR
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77


def decode_png(path):
    """Returns (width, height, channels, rows) for 8-bit RGB/RGBA non-interlaced PNGs."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, color, _, _, interlace = ihdr
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise ValueError(f"unsupported PNG: depth {depth} colour type {color} interlace {interlace}")
    ch = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * ch
    rows, prev, p = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, ch, rows


def main():
    gcbench, project, out = sys.argv[1:4]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (scripts/install-deps.sh installs it)")
        return SKIP
    os.makedirs(out, exist_ok=True)
    mem = os.path.join(out, "mem.json")
    html = os.path.join(out, "report.html")
    png = os.path.join(out, "report.png")
    for f in (html, png):
        if os.path.exists(f):
            os.remove(f)
    subprocess.run([gcbench, "mem", "--device", "cpu", "--size", "64K", "--latency-max", "256K", "--kernels",
                    "copy,triad", "--min-samples", "3", "--max-time", "0.2", "--json", mem, "-q"], check=True)
    fixture = os.path.join(project, "tests", "fixtures", "report", "synthetic_gpu.json")
    subprocess.run([gcbench, "report", mem, fixture, "-o", html, "--md", os.path.join(out, "report.md")], check=True)
    profile = os.path.join(out, "chromium-profile")
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1280,2000",
                           "--enable-logging=stderr", "--v=0", "file://" + os.path.abspath(html)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=170)
    errors = [l for l in proc.stderr.splitlines() if "Uncaught" in l or "ERROR:CONSOLE" in l]
    if errors:
        print("console errors:\n" + "\n".join(errors))
        return 1
    if not os.path.exists(png):
        print(f"chromium wrote no screenshot (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        return 1
    width, height, ch, rows = decode_png(png)
    non_white = coloured = 0
    for row in rows:
        for x in range(0, width * ch, ch):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if min(r, g, b) < 240:
                non_white += 1
            if max(r, g, b) - min(r, g, b) > 60:  # saturated: chart series, bars, heatmap cells
                coloured += 1
    total = width * height
    print(f"screenshot {width}x{height}: {non_white} non-white pixels ({100 * non_white / total:.1f}%), "
          f"{coloured} coloured ({100 * coloured / total:.2f}%)")
    # Text and tables alone cover a few percent; charts add saturated colour. A blank or
    # unstyled page fails one of these.
    if non_white < 0.02 * total:
        print("FAIL: the screenshot is (almost) blank")
        return 1
    if coloured < 0.002 * total:
        print("FAIL: no coloured chart marks in the screenshot")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
