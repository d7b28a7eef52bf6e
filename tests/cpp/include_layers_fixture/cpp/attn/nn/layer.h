// A layer of the fixture tree.
#pragma once
