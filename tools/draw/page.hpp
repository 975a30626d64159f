// Whole drawings: an SVG document of a figure (or of the circulant graph), and the HTML
// page that steps through it (inline SVG and a small script: no network, one file).
#pragma once
#include <string>
#include <vector>

#include "draw/figure.hpp"
#include "draw/views.hpp"

namespace ranklab::tools::draw {

// stepping: laid out for the HTML page (one data-flow grid beside the diagram, shown a step
// at a time); otherwise every step at once, for a static picture.
std::string figure_svg(const figure& fig, bool stepping);
// The circulant graph of p ranks with its schedule tables (circulant_view.cpp).
std::string circulant_svg(int p, bool stepping);

// An <svg class="ranklab"> root around `body`, with the shared styles and arrowheads.
// step_names[s] names step s (0: the start); the script steps through them.
std::string svg_document(const std::string& body, double width, double height,
                         const std::vector<std::string>& step_names);
std::string html_page(const std::string& title, const std::string& svg);

}  // namespace ranklab::tools::draw
