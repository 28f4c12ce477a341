#!/usr/bin/python3
"""contact-margin.py: README's figure of what the contact margin does to the CCP.

Runs scenes/sliding-cube.json under --model ccp with --contact-margin auto, 1e-6 and 0 (and
under lcp for reference) and draws the height of the cube's lowest point and its horizontal
speed: with "auto" the sliding contact stays in the problem and the cube hovers at
mu |v_t| dt; with a margin below that hover the contact leaves the problem and the cube hops;
with exactly 0 a resting contact is only seen after the cube has sunk, so it chatters by
g dt^2. Usage (from the repository root, after make):

    /usr/bin/python3 scripts/figures/contact-margin.py [OUT.png]

OUT defaults to scripts/figures/contact-margin.png. Prints each run's stop time and distance.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
import cdsim_h5  # noqa: E402

RUNS = [("lcp", "auto", "tab:blue", "-"), ("ccp", "auto", "tab:red", "-"),
        ("ccp", "1e-6", "tab:orange", "--"), ("ccp", "0", "black", ":")]


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "contact-margin.png")
    try:
        cdsim = cdsim_h5.find_cdsim(SCRIPTS)
        cdsim_h5.require_numpy()
    except cdsim_h5.CdsimError as exc:
        print("contact-margin.py: %s" % exc, file=sys.stderr)
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    scene = os.path.join(SCRIPTS, os.pardir, "scenes", "sliding-cube.json")
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    with tempfile.TemporaryDirectory() as tmp:
        for model, margin, colour, style in RUNS:
            h5 = os.path.join(tmp, "%s-%s.h5" % (model, margin))
            subprocess.run([cdsim, scene, "--model", model, "--contact-margin", margin, "--out", h5,
                            "--quiet"], check=True)
            run = cdsim_h5.Run(h5)
            label = "%s, contact_margin %s" % (model, margin)
            t_stop, d_stop = run.stop(0)
            print("%-28s stops at %s s, %s m" % (label, t_stop, d_stop))
            ax[0].plot(run.time, 1e3 * run.lowest_point()[:, 0], style, color=colour, label=label)
            ax[1].plot(run.time, run.horizontal_speed()[:, 0], style, color=colour, label=label)
    ax[0].set_ylabel("height of the lowest point (mm)")
    ax[1].set_ylabel("horizontal speed (m/s)")
    ax[1].set_xlabel("time (s)")
    for a in ax:
        a.grid(True, alpha=0.3)
    ax[0].legend(fontsize="small")
    fig.suptitle("sliding cube (v0 = 2 m/s, mu = 0.5, dt = 0.01 s): the contact margin")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print("wrote %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
