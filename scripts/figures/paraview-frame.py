"""paraview-frame.py: one frame of a cdsim run drawn by ParaView, offscreen (run by pvpython).

    pvpython --force-offscreen-rendering paraview-frame.py RUN.xdmf OUT.png [TIME]

Opens the sidecar with the XDMF Reader, goes to TIME (default: the last frame) and draws the
spheres as sphere glyphs scaled by their radius, the boxes as their hexahedra, the ground as
a plane, and each contact as an arrow along its normal (0.12 m long), coloured by its normal
impulse (scaled by it, the heavy tail of a pile's impulses makes most arrows vanish). This is
what a user gets by the same steps in the ParaView window (README, "Opening a run in
ParaView"). make-figures calls it for README's picture.
"""
import sys

from paraview import servermanager
from paraview.simple import (XDMFReader, ExtractBlock, Glyph, Plane, Show, GetActiveViewOrCreate,
                             ColorBy, GetColorTransferFunction, GetScalarBar, SaveScreenshot, Render)

xdmf, png = sys.argv[1], sys.argv[2]
reader = XDMFReader(FileNames=[xdmf])
times = list(reader.TimestepValues)
t = float(sys.argv[3]) if len(sys.argv) > 3 else times[-1]
t = min(times, key=lambda x: abs(x - t))
reader.UpdatePipeline(t)
data = servermanager.Fetch(reader)
names = [data.GetMetaData(i).Get(data.NAME()) for i in range(data.GetNumberOfBlocks())]

view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [1200, 800]
view.ViewTime = t
view.UseColorPaletteForBackground = 0
view.Background = [1, 1, 1]
view.OrientationAxesVisibility = 0


def block(name):
    """the block of the multiblock named name (spheres, boxes, contacts)"""
    return ExtractBlock(Input=reader, Selectors=["/Root/" + name])


if "spheres" in names:
    spheres = Glyph(Input=block("spheres"), GlyphType="Sphere")
    spheres.ScaleArray = ["POINTS", "radius"]
    spheres.ScaleFactor = 2.0  # the glyph is a sphere of diameter 1
    spheres.GlyphMode = "All Points"
    spheres.GlyphType.ThetaResolution = 24
    spheres.GlyphType.PhiResolution = 16
    d = Show(spheres, view)
    ColorBy(d, None)
    d.AmbientColor = d.DiffuseColor = [0.55, 0.65, 0.85]
    d.Opacity = 0.25
if "boxes" in names:
    d = Show(block("boxes"), view)
    ColorBy(d, None)
    d.AmbientColor = d.DiffuseColor = [0.85, 0.65, 0.4]
if "contacts" in names:
    arrows = Glyph(Input=block("contacts"), GlyphType="Arrow")
    arrows.OrientationArray = ["POINTS", "normal"]
    arrows.ScaleArray = ["POINTS", "No scale array"]
    arrows.GlyphMode = "All Points"
    arrows.ScaleFactor = 0.12  # every arrow 0.12 m: the colour gives the impulse
    imp = data.GetBlock(names.index("contacts")).GetPointData().GetArray("normal_impulse")
    d = Show(arrows, view)
    ColorBy(d, ("POINTS", "normal_impulse"))
    lut = GetColorTransferFunction("normal_impulse")
    lut.ApplyPreset("Inferno (matplotlib)", True)
    # colours over 0 .. the 95th percentile: a few impacts carry most of the range
    values = sorted(imp.GetValue(i) for i in range(imp.GetNumberOfTuples())) if imp else [1.0]
    lut.RescaleTransferFunction(0.0, max(values[int(0.95 * (len(values) - 1))], 1e-12))
    d.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = "normal impulse (N s)"
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0, 0, 0]

ground = Plane(Origin=[-1.5, -1.5, 0], Point1=[1.5, -1.5, 0], Point2=[-1.5, 1.5, 0])
g = Show(ground, view)
g.DiffuseColor = [0.6, 0.6, 0.6]
g.Opacity = 0.3

Render(view)  # the first render resets the camera: place it after
view.CameraPosition = [2.3, -3.2, 1.7]
view.CameraFocalPoint = [0, 0, 0.2]
view.CameraViewUp = [0, 0, 1]
view.CameraViewAngle = 30
Render(view)
SaveScreenshot(png, view, ImageResolution=[1200, 800])
print("%s: t = %.3f s, %s" % (png, t, ", ".join(names)))
